import '../shared/theme.css';
import './settings.css';
import { mount } from '../shared/mount.tsx';
import { SettingsApp } from './SettingsApp.tsx';

mount((api) => <SettingsApp api={api} />);
