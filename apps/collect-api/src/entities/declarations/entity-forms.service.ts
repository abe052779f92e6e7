import { Injectable, type OnModuleInit } from '@nestjs/common';
import { FieldValidationError } from '@collect/contracts';
import type { FormEntity } from '../../forms/form.entity.js';
import { FormPublishHooks, type FormDefinitionDraft } from '../../forms/form-publish-hooks.js';
import { EntityListsRepository } from '../lists/entity-lists.repository.js';
import { formEntities, FormEntitiesError, type FormEntities } from './form-entities.js';

/** Lists a form reads as a CSV attachment (`jr://file-csv/<list>.csv`, `jr://file/<list>.csv`). */
const CSV_INSTANCE = /\bsrc="jr:\/\/file(?:-csv)?\/([^"/]{1,255})\.csv"/g;

function repeatsOf(definition: FormDefinitionDraft): Set<string> {
  return new Set(definition.fields.filter((f) => f.type === 'repeat').map((f) => f.xpath));
}

/**
 * Publishing and entities (docs/entities.md "Forms"): a definition whose entity blocks break a
 * rule is refused (400); a stored one creates or reuses each list it names under the form's
 * owner, adds its `save_to` properties, and records the form as a registration form (it
 * creates) or a follow-up form (it only updates, or reads `<list>.csv`).
 */
@Injectable()
export class EntityFormsService implements OnModuleInit {
  constructor(
    private readonly hooks: FormPublishHooks,
    private readonly lists: EntityListsRepository,
  ) {}

  onModuleInit(): void {
    this.hooks.register({ check: (d) => this.check(d), published: (f) => this.published(f) });
  }

  check(definition: FormDefinitionDraft): FormEntities | null {
    try {
      return formEntities(definition.xml, repeatsOf(definition));
    } catch (err) {
      if (err instanceof FormEntitiesError) throw new FieldValidationError({ xml_file: [err.message] });
      throw err;
    }
  }

  async published(form: FormEntity): Promise<void> {
    const declared = this.check(form);
    const uses = new Map<string, { actions: Set<string>; saveTo: string[] }>();
    for (const d of declared?.declarations ?? []) {
      const use = uses.get(d.list) ?? { actions: new Set<string>(), saveTo: [] };
      for (const a of d.actions) use.actions.add(a);
      for (const p of d.properties) if (!use.saveTo.includes(p.name)) use.saveTo.push(p.name);
      uses.set(d.list, use);
    }
    const read = new Set([...form.xml.matchAll(CSV_INSTANCE)].map((m) => m[1]!));
    await this.lists.transaction(async (m) => {
      const linked: number[] = [];
      for (const [name, use] of uses) {
        const listId = await this.lists.ensure(m, form.ownerId, name, use.saveTo);
        await this.lists.linkForm(m, listId, form.id, [...use.actions].sort(), use.saveTo);
        linked.push(listId);
      }
      for (const name of read) {
        if (uses.has(name)) continue;
        const list = await this.lists.findByName(form.ownerId, name, m);
        if (!list) continue;
        await this.lists.linkForm(m, list.id, form.id, [], []);
        linked.push(list.id);
      }
      await this.lists.unlinkFormExcept(m, form.id, linked);
    });
  }
}
