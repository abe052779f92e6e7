import { AnyObject, Text } from '@collect/contracts';

/** `POST /api/v1/submissions` with `application/json` (decisions.md §Forms, submissions). */
export class JsonSubmissionDto {
  @Text({ required: true, blank: 'missing', requiredMessage: 'The form id_string is required.', message: 'The form id_string is required.', description: "The form's id_string." })
  id: string;

  @AnyObject({
    required: true,
    requiredMessage: 'An object with the answers is required.',
    message: 'An object with the answers is required.',
    description: 'Answers by question name: nested objects for groups (`{"group": {"q": "v"}}`) or flat xpaths (`{"group/q": "v"}`); `meta/instanceID` makes re-sending idempotent.',
  })
  submission: Record<string, unknown>;
}
