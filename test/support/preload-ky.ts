/**
 * The SDK loads ky on its first request (src/http/ky.ts), which is real I/O. Many tests drive fake timers for
 * a bounded number of I/O rounds; preloading ky here keeps that one-time module load out of what they measure.
 * test/http/cold-import.test.ts checks the lazy load itself, in a fresh process.
 */
await import('ky');
