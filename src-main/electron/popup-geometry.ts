/** Where the popup goes: a corner of a display's work area (the part not covered by task bars). */
import type { PopupCorner } from '../core/settings/types.ts';

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export const POPUP_WIDTH = 360;
export const POPUP_MIN_HEIGHT = 96;
export const POPUP_MARGIN = 12;

/** The popup's bounds in `workArea`, anchored at `corner`; height clamped to what fits. */
export function popupBounds(
  workArea: Rect,
  corner: PopupCorner,
  height: number,
  width = POPUP_WIDTH,
  margin = POPUP_MARGIN,
): Rect {
  const w = Math.max(1, Math.min(width, workArea.width - 2 * margin));
  const h = Math.round(Math.max(POPUP_MIN_HEIGHT, Math.min(height, workArea.height - 2 * margin)));
  const left = corner === 'top-left' || corner === 'bottom-left';
  const top = corner === 'top-left' || corner === 'top-right';
  return {
    x: Math.round(left ? workArea.x + margin : workArea.x + workArea.width - margin - w),
    y: Math.round(top ? workArea.y + margin : workArea.y + workArea.height - margin - h),
    width: Math.round(w),
    height: h,
  };
}
