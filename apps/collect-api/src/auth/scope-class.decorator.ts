import { SetMetadata } from '@nestjs/common';

export const SCOPE_CLASS = 'collect:scope-class';

/**
 * Which scope of a personal access token a route needs (docs/auth.md, "Scopes of a route"):
 * - no decorator: by HTTP method: GET, HEAD and OPTIONS are `read`-class (a `read` or `write`
 *   token), every other method is `write`-class (a `write` token);
 * - `submit`: what a phone needs (submission intake, formList, form download, manifests, form
 *   media): a `submit` or `write` token, and a `read` token where the method is safe;
 * - `account`: the user's own credentials and account (personal tokens, OAuth applications,
 *   API-token rotation, profile changes): never a personal token (403), whatever its scopes.
 * A new route therefore gets the narrowest sensible class without doing anything.
 */
export type ScopeClass = 'submit' | 'account';

export const SubmitClass = () => SetMetadata(SCOPE_CLASS, 'submit' satisfies ScopeClass);
export const AccountClass = () => SetMetadata(SCOPE_CLASS, 'account' satisfies ScopeClass);
