// The models a run may name besides the one under test (a judge, a user simulator): a table the gateway routes,
// container variables, secrets, usage and option rules all read, so that a role is added in one place.
// No imports: workflows read it too.

/**
 * The models a run may name besides the one under test, each with its own endpoint, key, gateway route (metered
 * on its own, not transcribed) and container variables `BENCHROUTER_<ROLE>_{ENDPOINT,MODEL,API_KEY}`. A new
 * role is one more row here and its three options in RunOptionFields.
 */
export const SIDE_MODELS = {
  judge: { fields: { model: 'judgeModel', endpoint: 'judgeEndpoint', apiKeyEnv: 'judgeApiKeyEnv' }, what: 'a judge', label: 'judge' },
  user: { fields: { model: 'userModel', endpoint: 'userEndpoint', apiKeyEnv: 'userApiKeyEnv' }, what: 'a user simulator', label: 'user simulator' },
} as const;
export type SideModelRole = keyof typeof SIDE_MODELS;
export const SIDE_MODEL_ROLES = Object.keys(SIDE_MODELS) as SideModelRole[];
export type SideModelField = (typeof SIDE_MODELS)[SideModelRole]['fields'][keyof (typeof SIDE_MODELS)[SideModelRole]['fields']];
