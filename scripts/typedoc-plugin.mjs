// TypeDoc plugin for `npm run docs`:
// - names each module after the import path users type (`@postsched/sdk/webhooks`), not after its file, and gives
//   it a summary (MODULES below): each entry point is its own top-level module;
// - sorts each module's exports into the groups of GROUPS (client, OAuth and tokens, stores, webhooks, schedule,
//   testing, errors, types), each group's listed names first, in the order listed (the main function or class of
//   each entry first), the rest alphabetically: the one table of groups, so no source file carries a tag. An export
//   this table does not place is a warning, an error under `treatWarningsAsErrors`: add it here;
// - gives a name re-exported from another entry point the summary of its declaration;
// - leaves out PostSchedError's `[Symbol.hasInstance]` static: it is the machinery of cross-copy `instanceof`
//   (explained on PostSchedError), not something a user calls or reads (the classes' `id` is `@internal`).
import { Comment, Converter, ReflectionGroup, ReflectionKind } from 'typedoc';

/** Each entry point's file name → the import path users type, and what the module is for. */
const MODULES = {
  index: ['@postsched/sdk', 'The client (`PostSched`), OAuth 2.0 with PKCE (`OAuthClient`), token refresh (`TokenManager`), many users (`UserClients`), and every error class.'],
  webhooks: ['@postsched/sdk/webhooks', 'Receive the service\'s signed webhooks: the whole endpoint (`createWebhookHandler`) or the verifier alone (`verifyWebhook`).'],
  testing: ['@postsched/sdk/testing', 'A fake of the service for your tests (`createFakeService`), webhook fixtures, and the conformance checks of a token store.'],
  redis: ['@postsched/sdk/redis', 'Tokens shared by every process through Redis (`RedisTokenStore`, every user\'s under a prefix: `RedisTokenSpace`), webhook deduplication (`RedisWebhookDedupe`), key rotation.'],
  postgres: ['@postsched/sdk/postgres', 'Tokens in a row of your PostgreSQL database (`PostgresTokenStore`), its table (`PostgresTokenTable`), key rotation.'],
  schedule: ['@postsched/sdk/schedule', 'Wall times in the user\'s time zone turned into instants, right across DST (`atLocalTime`, `weeklySlots`).'],
  tools: ['@postsched/sdk/tools', 'Tool definitions for AI agents (function calling and MCP), read-only unless told otherwise (`postschedTools`).'],
  otel: ['@postsched/sdk/otel', 'The SDK in OpenTelemetry traces and metrics (`PostSchedInstrumentation`).'],
};

/** The order of the groups on every page. */
const GROUP_ORDER = ['Client', 'OAuth and tokens', 'Stores', 'Rate limits', 'Webhooks', 'Schedule', 'Agent tools', 'Observability', 'Testing', 'Errors', 'Types', 'Schemas'];

/** Per module: group → names, the first ones first. Unlisted classes named `…Error` go to Errors. */
const GROUPS = {
  '@postsched/sdk': {
    Client: ['PostSched', 'UserClients', 'RateLimiter', 'PostSchedOptions', 'UserClientsOptions', 'KeepGrantsAliveOptions', 'KeepGrantsAliveResult', 'RateLimiterOptions', 'RateLimiterLike', 'RateLimitEvent', 'RateLimitState', 'APIPromise', 'Paginator', 'Posts', 'Accounts', 'Media', 'Analytics', 'PostSchedOverrides', 'SDK_VERSION'],
    Observability: ['REQUEST_CHANNEL', 'CALL_CHANNEL', 'WAIT_CHANNEL', 'RequestTrace', 'CallTrace', 'WaitTrace'],
    'OAuth and tokens': ['OAuthClient', 'TokenManager', 'OAuthClientOptions', 'TokenManagerOptions', 'TokenSet', 'Scope', 'SCOPES', 'AuthorizationRequest', 'CallbackChecks', 'AccessTokenProvider', 'TokenRefresher', 'Auth', 'DEFAULT_EXPIRES_IN_SECONDS'],
    Stores: ['TokenStore', 'MemoryTokenStore', 'TokenStoreSetOptions', 'TokenStoreLockOptions', 'TokenSpace', 'GrantsOptions', 'GrantPage', 'GrantInfo', 'GrantStatus', 'ListedStatus', 'StoredGrant', 'ReconnectMark'],
    Errors: ['PostSchedError', 'APIError', 'OAuthCallbackErrorCode', 'OAuthResponseErrorCode', 'ReauthorizationReason', 'TokenStoreOperation', 'isOutcomeUnknown', 'OutcomeUnknown'],
    Schemas: ['PostSchema', 'AccountSchema', 'MediaItemSchema', 'PostAnalyticsSchema', 'CreatePostParamsSchema', 'UpdatePostParamsSchema'],
    Types: ['Post', 'Account', 'MediaItem', 'PostAnalytics', 'PostCreateParams', 'PostUpdateParams', 'PostListParams', 'PostStatus', 'PostStatusFilter', 'AccountListParams', 'MediaUploadParams', 'MediaUploadOptions', 'UploadFile', 'UploadProgress', 'NodeReadableLike', 'ListParams', 'Page', 'RequestOptions', 'WriteRequestOptions', 'RawRequestOptions', 'RawWriteOptions', 'RawListOptions', 'RawQuery', 'WithResponse', 'RateLimitInfo', 'HeadersInput', 'AppInfo', 'Logger', 'Hooks', 'RequestHookInfo', 'ResponseHookInfo', 'RetryHookInfo', 'FetchLike'],
  },
  '@postsched/sdk/webhooks': {
    Webhooks: ['createWebhookHandler', 'verifyWebhook', 'verifyWebhookRequest', 'signWebhook', 'webhookDedupeKey', 'WebhookHandlerOptions', 'WebhookHandler', 'WebhookEventHandlers', 'WebhookHandlerContext', 'WebhookErrorContext', 'WebhookDedupe', 'WebhookDedupeStore', 'WebhookClaim', 'WebhookClaimContext', 'WebhookClaimResult', 'WebhookClaimState', 'VerifyWebhookOptions', 'VerifyWebhookRequestOptions', 'VerifyWebhookClockOptions', 'SignWebhookOptions', 'WebhookSecret', 'WEBHOOK_SIGNATURE_HEADER', 'WEBHOOK_EVENT_TYPES', 'DEFAULT_WEBHOOK_MAX_BODY_BYTES', 'DEFAULT_WEBHOOK_TOLERANCE_SECONDS', 'NodeWebhookRequest', 'NodeWebhookResponse'],
    Errors: ['WebhookVerificationError', 'WebhookTimeoutError', 'WebhookVerificationReason', 'WebhookTimeoutReason', 'WebhookTimedStep'],
    Schemas: ['WebhookEventSchema', 'PostScheduledEventSchema', 'PostPublishedEventSchema', 'PostFailedEventSchema', 'PostDeletedEventSchema', 'UnknownWebhookEventSchema', 'PostPublishedDataSchema', 'WebhookPostDataSchema'],
    Types: ['WebhookEvent', 'KnownWebhookEvent', 'WebhookEventType', 'PostPublishedEvent', 'PostScheduledEvent', 'PostFailedEvent', 'PostDeletedEvent', 'UnknownWebhookEvent', 'PostPublishedData', 'WebhookPostData', 'WebhookBody', 'WebhookSignature', 'HeadersGetter', 'HeadersRecord'],
  },
  '@postsched/sdk/testing': {
    Testing: ['createFakeService', 'FakeService', 'FakeServiceOptions', 'tokenStoreConformance', 'TokenStoreConformanceOptions', 'TokenStoreConformanceCheck', 'signedWebhookDelivery', 'webhookFixtures', 'webhookFixture', 'signWebhook', 'ListeningFakeService', 'FakeClock', 'FakeFaults', 'FakeStats'],
    Types: ['IssuedTokens', 'ClockOptions', 'FaultTarget', 'AfterCommit', 'RefreshPolicy', 'FakeGrant', 'MswHttpLike', 'MediaOptions', 'AppInput', 'AccountInput', 'WebhookEndpointInput', 'ConsentMode', 'WireProfile', 'RegisteredApp', 'FakePost', 'FakeAccount', 'FakeMediaItem', 'FakePostAnalytics', 'StoredMedia', 'WebhookEndpoint', 'WebhookEventType', 'WebhookDelivery', 'WebhookDeliveryOptions', 'SignedWebhookDelivery', 'WebhookFixtureOverrides', 'WebhookFixtures', 'SignWebhookOptions'],
  },
  '@postsched/sdk/redis': {
    Stores: ['RedisTokenStore', 'RedisTokenStoreOptions', 'RedisTokenSpace', 'RedisTokenSpaceOptions', 'GrantsOptions', 'GrantPage', 'GrantInfo', 'GrantStatus', 'ListedStatus', 'rotateTokenEncryption', 'RotateTokenEncryptionOptions', 'TokenRotationResult', 'EncryptionKey', 'EncryptionKeyring'],
    'Rate limits': ['RedisRateLimiter', 'RedisRateLimiterOptions'],
    Webhooks: ['RedisWebhookDedupe', 'RedisWebhookDedupeOptions'],
    Errors: ['SharedTokenStoreError', 'SharedTokenStoreErrorCode', 'StoreFailureSite', 'StoredTokensProblem', 'WebhookDedupeOperation'],
    Types: ['RedisClientLike', 'IORedisClientLike', 'NodeRedisClientLike', 'NodeRedisClusterLike'],
  },
  '@postsched/sdk/postgres': {
    Stores: ['PostgresTokenStore', 'PostgresTokenStoreOptions', 'PostgresTokenTable', 'PostgresTokenTableOptions', 'GrantsOptions', 'GrantPage', 'GrantInfo', 'GrantStatus', 'ListedStatus', 'createTokenTable', 'tokenTableSql', 'TokenTableOptions', 'rotateTokenEncryption', 'RotateTokenEncryptionOptions', 'TokenRotationResult', 'EncryptionKey', 'EncryptionKeyring'],
    Webhooks: ['PostgresWebhookDedupe', 'PostgresWebhookDedupeOptions', 'createWebhookDedupeTable', 'webhookDedupeTableSql', 'WebhookDedupeTableOptions'],
    Errors: ['SharedTokenStoreError', 'SharedTokenStoreErrorCode', 'StoreFailureSite', 'StoredTokensProblem', 'WebhookDedupeUnavailableError', 'WebhookDedupeOperation'],
    Types: ['PgPoolLike', 'PgResultLike'],
  },
  '@postsched/sdk/schedule': {
    Schedule: ['atLocalTime', 'weeklySlots', 'AtLocalTimeOptions', 'WeeklySlotsOptions', 'Disambiguation', 'Weekday'],
  },
  '@postsched/sdk/tools': {
    'Agent tools': ['postschedTools', 'PostschedToolsOptions', 'PostschedTool', 'ToolResult', 'ToolCallOptions', 'ToolAnnotations', 'ToolJsonSchema', 'ToolAccess', 'MediaDownloadOptions'],
  },
  '@postsched/sdk/otel': {
    Observability: ['PostSchedInstrumentation', 'PostSchedInstrumentationConfig'],
  },
};
const HIDDEN_STATICS = new Set(['[hasInstance]']);

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    const { project } = context;
    for (const module of project.getChildrenByKind(ReflectionKind.Module)) {
      const [name, summary] = MODULES[module.name] ?? [module.name];
      module.name = name;
      if (summary !== undefined && module.comment === undefined) module.comment = new Comment([{ kind: 'text', text: summary }]);
    }
    for (const member of project.getReflectionsByKind(ReflectionKind.Property | ReflectionKind.Method)) {
      if (HIDDEN_STATICS.has(member.name) && member.flags.isStatic) project.removeReflection(member);
    }
  });

  // After TypeDoc's own grouping (GroupPlugin, priority -100), which groups by kind: replaced by GROUPS.
  app.converter.on(
    Converter.EVENT_RESOLVE_END,
    (context) => {
      for (const module of context.project.getChildrenByKind(ReflectionKind.Module)) {
        const table = GROUPS[module.name];
        if (table === undefined) {
          app.logger.warn(`scripts/typedoc-plugin.mjs: no groups for the module ${module.name}`);
          continue;
        }
        const groups = new Map(GROUP_ORDER.map((title) => [title, new ReflectionGroup(title, module)]));
        const rank = new Map();
        for (const [title, names] of Object.entries(table)) names.forEach((name, i) => rank.set(name, [title, i]));
        for (const child of module.children ?? []) {
          const [title, i] = rank.get(child.name) ?? (child.kindOf(ReflectionKind.Class) && child.name.endsWith('Error') ? ['Errors', Infinity] : []);
          if (title === undefined) {
            app.logger.warn(`scripts/typedoc-plugin.mjs: ${module.name} exports ${child.name}, which GROUPS places in no group: add it there.`);
            continue;
          }
          groups.get(title).children.push(child);
          // A name another entry exports too is a reference: its summary is the declaration's, and says where that is.
          if (child.kindOf(ReflectionKind.Reference) && child.comment === undefined) {
            const target = child.getTargetReflectionDeep();
            let home = target.parent;
            while (home !== undefined && !home.kindOf(ReflectionKind.Module)) home = home.parent;
            const summary = target.comment?.summary ?? [];
            child.comment = new Comment([...summary, { kind: 'text', text: ` (The same as in ${home?.name ?? 'another entry'}.)` }]);
          }
          child.rank = i;
        }
        for (const group of groups.values()) {
          group.children.sort((a, b) => a.rank - b.rank || a.name.localeCompare(b.name));
          for (const child of group.children) delete child.rank;
        }
        module.groups = [...groups.values()].filter((group) => group.children.length > 0);
        module.categories = undefined;
      }
    },
    -200,
  );
}
