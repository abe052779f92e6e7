import type { DeliveryEvent, EntityDeliveryEvent, ServiceName, ServiceOptions } from '../restservice.entities.js';

export const ENTITY_EVENTS: readonly EntityDeliveryEvent[] = ['entity_created', 'entity_updated', 'entity_deleted'];
export const DELIVERY_EVENTS: readonly DeliveryEvent[] = ['created', 'updated', 'deleted', ...ENTITY_EVENTS];

export function isEntityEvent(event: DeliveryEvent): event is EntityDeliveryEvent {
  return event.startsWith('entity_');
}

/**
 * The events a service takes when it names none (docs/restservices.md, "Events"): a flow start
 * (`messaging`) or a health ping would repeat itself on every edit, so they take new submissions
 * only; the data receivers take new and edited ones; a spreadsheet with `sync_updates` mirrors
 * the form (rows rewritten on edit, cleared on delete), without it only appends.
 */
export function defaultEvents(name: ServiceName, options: Pick<ServiceOptions, 'sync_updates'>): DeliveryEvent[] {
  switch (name) {
    case 'messaging':
    case 'health_forwarder':
      return ['created'];
    case 'spreadsheet':
      return options.sync_updates === false ? ['created'] : ['created', 'updated', 'deleted'];
    default:
      return ['created', 'updated'];
  }
}

/** Stored in a fixed order, whatever order the client sent. */
export function normalizedEvents(events: readonly DeliveryEvent[]): DeliveryEvent[] {
  return DELIVERY_EVENTS.filter((e) => events.includes(e));
}
