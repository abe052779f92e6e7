import type { EntityListCounts, EntityListRow } from '../lists/entity-lists.repository.js';
import type { EntityRow } from '../records/entities.repository.js';
import type { EntityBody, EntityListBody } from './entity-api.dto.js';

export function listUrl(baseUrl: string, listId: number): string {
  return `${baseUrl}/api/v2/entity-lists/${listId}`;
}

export function entityListJson(baseUrl: string, list: EntityListRow, counts: EntityListCounts): EntityListBody {
  return {
    url: listUrl(baseUrl, list.id), id: list.id, name: list.name, owner: list.owner, public: false,
    date_created: list.date_created.toISOString(), date_modified: list.date_modified.toISOString(),
    num_registration_forms: counts.num_registration_forms, num_follow_up_forms: counts.num_follow_up_forms, num_entities: counts.num_entities,
  };
}

/** The entity object of the API and of entity events (docs/entities.md "API"): properties and `label` in `data`. */
export function entityJson(baseUrl: string, e: EntityRow): EntityBody {
  const body: EntityBody = {
    url: `${listUrl(baseUrl, e.list_id)}/entities/${e.id}`, id: e.id, uuid: e.uuid,
    date_created: e.date_created.toISOString(), date_modified: e.date_modified.toISOString(),
    version: e.version, conflict: e.conflict, creator_submission: e.creator_submission_id,
    data: { ...e.data, label: e.label },
  };
  if (e.deleted_at) body.deleted_at = e.deleted_at.toISOString();
  return body;
}

/** `X-Total-Count` and `Link` (rel next/prev) of a paged listing at `url`, as the other listings answer. */
export function pageHeaders(url: string, page: number, pageSize: number, total: number): Record<string, string> {
  const at = (p: number) => {
    const u = new URL(url);
    u.searchParams.set('page', String(p));
    u.searchParams.set('page_size', String(pageSize));
    return u.toString();
  };
  const links: string[] = [];
  if (page * pageSize < total) links.push(`<${at(page + 1)}>; rel="next"`);
  if (page > 1) links.push(`<${at(page - 1)}>; rel="prev"`);
  return { 'X-Total-Count': String(total), ...(links.length ? { Link: links.join(', ') } : {}) };
}
