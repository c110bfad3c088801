/**
 * Untrusted text (caller ID, names from contacts, numbers) as the UI shows it. It is only ever a
 * React text node, so markup in it stays characters. `<bdi dir="auto">` isolates its direction:
 * right-to-left text or a stray U+202E override cannot reorder the labels and buttons around it.
 * Long values are cut visually (CSS ellipsis or line clamp) while the DOM and the tooltip keep the
 * full value.
 */
export interface InertTextProps {
  text: string;
  /** 'line' cuts at one line; 'clamp' wraps up to two lines before cutting. */
  fit?: 'line' | 'clamp';
  className?: string;
  testId?: string;
  id?: string;
}

export function InertText({ text, fit = 'line', className, testId, id }: InertTextProps) {
  const classes = ['inert', fit === 'clamp' ? 'inert--clamp' : 'inert--line', className]
    .filter(Boolean)
    .join(' ');
  return (
    <bdi dir="auto" className={classes} title={text} data-testid={testId} id={id}>
      {text}
    </bdi>
  );
}

/** A bounded form of untrusted text for aria-labels, where a 5,000-character name helps no one. */
export function spokenText(text: string, max = 80): string {
  const trimmed = text.trim();
  if (trimmed.length <= max) return trimmed;
  return `${trimmed.slice(0, max)}…`;
}
