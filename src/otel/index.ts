/**
 * `@postsched/sdk/otel`: the SDK in OpenTelemetry traces and metrics, registered like every instrumentation.
 *
 * @example
 * import { registerInstrumentations } from '@opentelemetry/instrumentation'
 * import { PostSchedInstrumentation } from '@postsched/sdk/otel'
 * registerInstrumentations({ instrumentations: [new PostSchedInstrumentation()] })
 *
 * @module
 */
export { PostSchedInstrumentation, type PostSchedInstrumentationConfig } from './instrumentation.js';
