export { EventBus, type Listener, type EventMeta } from './bus';
export { RealtimeHub, folderKey, OP_NOTICE, isOpNotice, type RealtimeFrame, type Subscriber, type OpNotice } from './realtime';
export type { EventMap, EventName, ActorRef, RequestMeta, NodeRef, AuditPayload } from './types';
export { createMailer, splitAddresses, isEmail, type Mailer, type MailMessage, type SmtpSettings } from './mail';
export { Bell, attachBell, BELL_KEEP_PER_USER, EXTRA_SEVERITIES, type Notification, type NewNotification, type Severity, type BellRecipients } from './bell';
export { Webhooks, signWebhook, WEBHOOK_JOB, WEBHOOK_EVENTS, type WebhookTarget, type WebhookOptions, type Delivery } from './webhooks';
