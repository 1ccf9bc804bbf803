// Where the routes live: the public API under one prefix, the providers' callbacks under another
// (URLs given to Meta and Twilio are built from it, so it is written once).
export const API_PREFIX = '/api/v1/public';
export const CALLBACKS_PREFIX = '/api/v1/callbacks';
