import '../shared/theme.css';
import './history.css';
import { mount } from '../shared/mount.tsx';
import { HistoryApp } from './HistoryApp.tsx';

mount((api) => <HistoryApp api={api} />);
