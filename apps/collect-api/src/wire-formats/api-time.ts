/** `YYYY-MM-DDTHH:MM:SS`, UTC, no offset: every time the API shows (docs/api-conventions.md §Submission JSON). */
export function formatSubmissionTime(d: Date): string {
  return d.toISOString().slice(0, 19);
}
