import { Text } from '@collect/contracts';

/** `GET /formList` (OpenRosa Form List API): `formID` narrows the list to one form. */
export class FormListQueryDto {
  @Text({ description: 'Only the form with this id_string.' })
  formID?: string;
}
