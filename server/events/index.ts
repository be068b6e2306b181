export { EventBus, type Listener } from './bus';
export { RealtimeHub, folderKey, type RealtimeFrame, type Subscriber } from './realtime';
export type { EventMap, EventName, Actor, RequestMeta, NodeRef, AuditPayload } from './types';
