import { Text } from '@collect/contracts';

/** The login page's form (`POST /interaction/{uid}/login`); an empty field re-renders the page. */
export class InteractionLoginDto {
  @Text() username?: string;
  @Text() password?: string;
}
