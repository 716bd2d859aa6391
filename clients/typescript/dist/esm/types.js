// The API's request and answer shapes, derived from the types that
// openapi-typescript generates from docs/openapi.yaml (generated/openapi.ts):
// a change of the spec changes these.
export {};
