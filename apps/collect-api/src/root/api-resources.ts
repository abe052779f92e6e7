/** Resource names listed by the API root. Append as features land. */
export const apiResources: string[] = [];
apiResources.push('user', 'profiles', 'oauth-applications');
apiResources.push('forms', 'submissions', 'data', 'merged-datasets', 'dataviews');
apiResources.push('media');
