import '../shared/theme.css';
import './dial.css';
import { mount } from '../shared/mount.tsx';
import { DialApp } from './DialApp.tsx';

mount((api) => <DialApp api={api} />);
