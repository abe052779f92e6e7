/**
 * Per-form roles of docs/api-conventions.md §Roles and permissions, highest first. The rank decides every
 * check: a role allows an action when its rank is at least the action's minimum role.
 */
export const FORM_ROLES = ['owner', 'manager', 'editor', 'dataentry', 'readonly'] as const;
export type FormRole = (typeof FORM_ROLES)[number];

const RANK: Record<FormRole, number> = { owner: 5, manager: 4, editor: 3, dataentry: 2, readonly: 1 };

export function roleRank(role: FormRole | null | undefined): number {
  return role ? RANK[role] : 0;
}

export function roleAtLeast(role: FormRole | null | undefined, minimum: FormRole): boolean {
  return roleRank(role) >= RANK[minimum];
}

/** Minimum role per action (docs/api-conventions.md §Roles and permissions), named so modules do not hard-code ranks. */
export const MIN_ROLE = {
  view: 'readonly',
  submit: 'dataentry',
  editSubmissions: 'editor',
  manageRestServices: 'editor',
  deleteForm: 'manager',
  deleteRestService: 'manager',
  share: 'manager',
} as const satisfies Record<string, FormRole>;
