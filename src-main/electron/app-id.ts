/** Equal to electron-builder.yml's appId: Windows groups notifications and task bar entries by it. */
export const APP_ID = 'com.screenpop.desktop';
