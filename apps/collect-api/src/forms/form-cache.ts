import { Inject, Injectable } from '@nestjs/common';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { NotifiedCache } from '../database/notified-cache.js';
import type { FormEntity } from './form.entity.js';
import { FormsRepository } from './forms.repository.js';
import type { FormRole } from './roles.js';

const MAX_FORM_ENTRIES = 1_000;
const MAX_ROLE_ENTRIES = 50_000;

/**
 * The form and role lookups of submission intake and of the data pages, served from memory (docs/forms.md,
 * "Intake: caches and one statement"). Every change of a form, a role or a user row drops the
 * entries it touches in every process when it commits (ChangeNotifications); FORM_CACHE_TTL_MS
 * bounds an entry's age besides. The cache is never the last word: intake refuses only after
 * reading afresh (`fresh`), and writes the instance with a statement that checks the form and
 * the role again (SubmissionsRepository.insertChecked; a data page's statement does the same,
 * SubmissionDataRepository.docs). Cached forms are frozen: shared by requests.
 */
@Injectable()
export class FormCache {
  /** Live form by id (the data pages: submissions/submission-data.service.ts). */
  private readonly byId: NotifiedCache<FormEntity | null>;
  /** Live forms by id_string, in id order. */
  private readonly byIdString: NotifiedCache<readonly FormEntity[]>;
  /** `<lower(owner username)>\n<id_string>` → that owner's live form. */
  private readonly byOwner: NotifiedCache<FormEntity | null>;
  /** `<form id>:<user id>` → role (the payload of the form_roles trigger). */
  private readonly roles: NotifiedCache<FormRole | null>;
  /** user id → username, for storage paths. */
  private readonly usernames: NotifiedCache<string | null>;

  constructor(
    private readonly forms: FormsRepository,
    changes: ChangeNotifications,
    @Inject(COLLECT_CONFIG) config: Pick<CollectConfig, 'FORM_CACHE_TTL_MS'>,
  ) {
    const options = (maxEntries: number) => ({ ttlMs: config.FORM_CACHE_TTL_MS, maxEntries });
    this.byId = new NotifiedCache(changes, options(MAX_FORM_ENTRIES));
    this.byIdString = new NotifiedCache(changes, options(MAX_FORM_ENTRIES));
    this.byOwner = new NotifiedCache(changes, options(MAX_FORM_ENTRIES));
    this.roles = new NotifiedCache(changes, options(MAX_ROLE_ENTRIES));
    this.usernames = new NotifiedCache(changes, options(MAX_FORM_ENTRIES));
    changes.on('form', (rest) => {
      const idString = rest.slice(rest.indexOf(':') + 1);
      this.byId.invalidate(rest.slice(0, rest.indexOf(':')));
      this.byIdString.invalidate(idString);
      this.byOwner.invalidateWhere((key) => key.slice(key.indexOf('\n') + 1) === idString);
    });
    changes.on('role', (rest) => this.roles.invalidate(rest));
    changes.on('user', (rest) => {
      // A renamed or deactivated owner changes which form an owner path names.
      this.byOwner.clear();
      this.usernames.invalidate(rest);
    });
  }

  liveById(id: number): Promise<FormEntity | null> {
    return this.byId.getOrLoad(String(id), async () => {
      const form = await this.forms.findLive(id);
      return form && freezeForm(form);
    });
  }

  liveByIdString(idString: string, fresh = false): Promise<readonly FormEntity[]> {
    const load = async () => (await this.forms.findLiveByIdString(idString)).map(freezeForm);
    return fresh ? this.byIdString.load(idString, load) : this.byIdString.getOrLoad(idString, load);
  }

  liveByOwnerName(username: string, idString: string, fresh = false): Promise<FormEntity | null> {
    const key = `${username.toLowerCase()}\n${idString}`;
    const load = async () => {
      const form = await this.forms.findLiveByOwnerNameAndIdString(username, idString);
      return form && freezeForm(form);
    };
    return fresh ? this.byOwner.load(key, load) : this.byOwner.getOrLoad(key, load);
  }

  roleOf(formId: number, userId: number, fresh = false): Promise<FormRole | null> {
    const key = `${formId}:${userId}`;
    const load = () => this.forms.roleOf(formId, userId);
    return fresh ? this.roles.load(key, load) : this.roles.getOrLoad(key, load);
  }

  async username(userId: number): Promise<string | null> {
    return this.usernames.getOrLoad(String(userId), async () => (await this.forms.findOwners([userId])).get(userId) ?? null);
  }
}

function freezeForm(form: FormEntity): FormEntity {
  Object.freeze(form.fields);
  return Object.freeze(form);
}
