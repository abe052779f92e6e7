import { Injectable } from '@nestjs/common';
import type { FormEntity } from './form.entity.js';

/** A definition about to be stored: its XForm and fields. */
export type FormDefinitionDraft = Pick<FormEntity, 'xml' | 'fields'>;

/**
 * Work of a higher feature when a form definition is published (docs/entities.md "Forms"):
 * `check` refuses a definition before anything is stored (throws a 4xx), `published` runs after
 * the form or its new definition is stored.
 */
export interface FormPublishHook {
  check(definition: FormDefinitionDraft): void;
  published(form: FormEntity): Promise<void>;
}

/**
 * The hooks publishing runs. Features above forms in the layer order register theirs once at
 * start (onModuleInit), as forms may not import them.
 */
@Injectable()
export class FormPublishHooks {
  private readonly hooks: FormPublishHook[] = [];

  register(hook: FormPublishHook): void {
    this.hooks.push(hook);
  }

  check(definition: FormDefinitionDraft): void {
    for (const hook of this.hooks) hook.check(definition);
  }

  async published(form: FormEntity): Promise<void> {
    for (const hook of this.hooks) await hook.published(form);
  }
}
