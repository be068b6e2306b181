export { EventBus, type Listener } from './bus';
export type { EventMap, EventName, Actor, RequestMeta, NodeRef, AuditPayload } from './types';
