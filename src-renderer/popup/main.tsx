import '../shared/theme.css';
import './popup.css';
import { mount } from '../shared/mount.tsx';
import { PopupApp } from './PopupApp.tsx';

mount((api) => <PopupApp api={api} />);
