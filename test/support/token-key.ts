/**
 * The encryption key of the tests' token stores: a store refuses to start without one (or an explicit
 * `encryptionKey: 'none'`, kept for the tests about values in clear). 32 bytes of a fixed pattern, never a real key.
 */
export const TEST_KEY = Buffer.alloc(32, 0x5a).toString('base64');
