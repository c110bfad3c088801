; Screenpop's addition to electron-builder's NSIS installer (electron-builder.yml: nsis.include).
;
; An all-users installation (elevated) makes the folder of the machine-wide policy,
; C:\ProgramData\Screenpop, administrators-only: owned by Administrators, inheritance from
; C:\ProgramData removed (it lets every user create files), and only SYSTEM and Administrators
; may change it (Users read). The app honours policy.json only in such a folder
; (src-main/core/settings/windows-acl.ts; test/electron/installer-nsh.test.ts checks that these
; icacls lines leave an ACL that rule accepts). A folder an ordinary user made before is taken
; back: owner, then its entries reset, then the grants; a file inside it keeps its own owner and
; permissions and is judged by the app (a planted one is refused).
;
; icacls is run by its full path in the system folder ($SYSDIR, from Windows, not from the
; environment), accounts as SIDs (their names change with the system's language). Only where
; Windows' ProgramData is C:\ProgramData, the fixed folder the app reads ($APPDATA is ProgramData
; in the all-users context). A per-user installation runs without administrator rights and
; cannot make such a folder, so it leaves it alone. The uninstaller leaves the folder and its
; policy: they are the administrators'. icacls's own output goes to the installer's log, in the
; system's language; the app's log says whether the policy is honoured.
!macro customInstall
  ; Which installation this is, for the app (src-main/core/updates/install-kind.ts, INSTALL_SCOPE_FILE):
  ; an all-users one, wherever its folder (Program Files, D:\Apps), never updates itself, as the
  ; update would ask for administrator rights between calls. Rewritten by every install and
  ; update; removed with the folder by the uninstaller.
  ${if} $installMode == "all"
    FileOpen $0 "$INSTDIR\resources\install-scope" w
    FileWrite $0 "all-users"
    FileClose $0
  ${else}
    FileOpen $0 "$INSTDIR\resources\install-scope" w
    FileWrite $0 "per-user"
    FileClose $0
  ${endIf}
  ${if} $installMode == "all"
  ${andIf} $APPDATA == "C:\ProgramData"
    CreateDirectory "C:\ProgramData\Screenpop"
    nsExec::ExecToLog '"$SYSDIR\icacls.exe" "C:\ProgramData\Screenpop" /setowner *S-1-5-32-544'
    Pop $0
    nsExec::ExecToLog '"$SYSDIR\icacls.exe" "C:\ProgramData\Screenpop" /reset'
    Pop $0
    nsExec::ExecToLog '"$SYSDIR\icacls.exe" "C:\ProgramData\Screenpop" /inheritance:r /grant:r *S-1-5-18:(OI)(CI)F *S-1-5-32-544:(OI)(CI)F *S-1-5-32-545:(OI)(CI)RX'
    Pop $0
  ${endIf}
!macroend

; An all-users uninstall (not the uninstall an update runs) also removes what Electron wrote for
; the uninstalling user at the app's first notification (Electron 42+, src-main/electron/
; windows-toasts.ts): the per-user Start Menu shortcut, which would outlive the program and point
; at nothing, and the Toast Activator CLSID's key. Other users' copies cannot be reached from
; here: README, "What an uninstall removes", has the lines for a logon script. A per-user
; uninstall needs nothing more: that shortcut is the one electron-builder's uninstaller deletes.
!macro customUnInstall
  ${ifNot} ${isUpdated}
  ${andIf} $installMode == "all"
    SetShellVarContext current
    Delete "$SMPROGRAMS\Screenpop.lnk"
    DeleteRegKey HKCU "Software\Classes\CLSID\{7406997E-3567-4C0C-A64A-5783965586A6}"
    SetShellVarContext all
  ${endIf}
!macroend
