/**
 * Limits of settings that the Settings window shows and checks as the user types, and the core
 * enforces (validate-settings.ts): one definition for both sides (the renderer imports only types
 * from src-main/).
 */

/** The CRM lookup's time-out, in whole seconds (src-main/core/crm/README.md says why 3 by default). */
export const CRM_TIMEOUT_SEC = { min: 1, max: 10 } as const;
