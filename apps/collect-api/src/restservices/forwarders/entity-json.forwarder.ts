import { entityJson } from '../../entities/api/entity-json.js';
import type { RestServiceEntity } from '../restservice.entities.js';
import { jsonBody, type OutgoingRequest } from './forwarder.js';

/** What an entity event's outbox row keeps (delivery/entity-outbox.ts): the entity as the change left it, and its list's name. */
export interface EntitySnapshot {
  list: string;
  entity: {
    id: number; list_id: number; uuid: string; label: string; data: Record<string, string>; version: number; conflict: 'soft' | 'hard' | null;
    creator_submission_id: number | null; date_created: string; date_modified: string; deleted_at: string | null;
  };
}

/**
 * An entity event to a generic_json service (docs/entities.md, "Entity events to rest
 * services"): `POST service_url`, `application/json`, body = the entity object of the entities
 * API (entityJson) plus `"list"`, the list's name; `deleted_at` on a deletion.
 */
export function entityRequest(service: RestServiceEntity, snapshot: EntitySnapshot, baseUrl: string): OutgoingRequest {
  const e = snapshot.entity;
  const body = entityJson(baseUrl, {
    ...e, creator_id: null, date_created: new Date(e.date_created), date_modified: new Date(e.date_modified), deleted_at: e.deleted_at ? new Date(e.deleted_at) : null,
  });
  return { method: 'POST', url: service.serviceUrl, headers: { 'Content-Type': 'application/json' }, body: jsonBody({ ...body, list: snapshot.list }) };
}
