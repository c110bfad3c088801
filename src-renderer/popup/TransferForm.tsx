/**
 * Transfer's field (issue 38 item 4), opened under a call the user answered: where the call goes,
 * a colleague picked from the directory by name or extension, or a number typed.
 *
 * Keyboard first, the ARIA combobox pattern: typing asks main for the colleagues that match
 * (`findColleagues`; the ranking is the core's, src-main/core/contacts/colleagues.ts), Down and Up
 * move through them (`aria-activedescendant`: the focus stays in the field), Enter picks the one
 * marked (the field then says the colleague's name) and Enter again transfers; Escape closes the
 * list, then the field. Each colleague is read as "Name, extension 204". A picked colleague is
 * transferred to by their extension; anything else typed is sent as typed and main's one dial
 * rule judges it (a name that is no colleague is refused there, in words).
 *
 * "Transfer now" is a blind transfer; "Consult first" an attended one (the caller on hold while the
 * user talks to the colleague; the card then offers Complete transfer and Cancel transfer).
 * Names come from the phone system: rendered as text only (InertText).
 */
import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import type { Colleague, TransferMode } from '../../src-main/ipc/contract.ts';
import { InertText } from '../shared/InertText.tsx';
import { useT } from '../shared/i18n.tsx';

export interface TransferFormProps {
  id: string;
  /** Colleagues matching what was typed (main's directory); absent: no picker, a number only. */
  findColleagues?: (query: string) => Promise<Colleague[]>;
  /** `to`: the extension or number; `shown`: how the card names it while consulting. */
  onTransfer: (to: string, mode: TransferMode, shown: string) => void;
  onClose: () => void;
}

/** Letters in what was typed: a name, not a number (the "no colleague" hint is for names only). */
const HAS_LETTER = /\p{L}/u;

export function TransferForm({ id, findColleagues, onTransfer, onClose }: TransferFormProps) {
  const t = useT();
  const [text, setText] = useState('');
  const [picked, setPicked] = useState<Colleague | null>(null);
  const [found, setFound] = useState<Colleague[]>([]);
  const [answered, setAnswered] = useState('');
  const [active, setActive] = useState(-1);
  const [listOpen, setListOpen] = useState(false);
  const asked = useRef(0);
  const optionId = `${useId()}-colleague`;
  const listId = `${id}-colleagues`;
  const hintId = `${id}-hint`;

  const query = picked ? '' : text.trim();
  useEffect(() => {
    if (!findColleagues || !query) return;
    // Only the answer to the latest query counts: an earlier one may come back later.
    const ticket = ++asked.current;
    findColleagues(query)
      .then((list) => {
        if (ticket !== asked.current) return;
        setFound(list);
        setAnswered(query);
        setActive(-1);
        setListOpen(true);
      })
      .catch(() => undefined);
  }, [findColleagues, query]);

  const shownList = query && answered === query ? found : [];
  const open = listOpen && shownList.length > 0;
  // A name that matches no colleague (a number needs no hint: it is sent as typed).
  const none =
    !!findColleagues && answered === query && found.length === 0 && HAS_LETTER.test(query);
  const target = picked?.extension ?? text.trim();

  const pick = (c: Colleague): void => {
    setPicked(c);
    setText(c.name);
    setListOpen(false);
    setActive(-1);
  };
  const send = (mode: TransferMode): void => {
    if (!target) return;
    onTransfer(target, mode, picked ? `${picked.name} (${picked.extension})` : target);
  };
  const onKey = (event: KeyboardEvent<HTMLInputElement>): void => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      if (shownList.length === 0) return;
      event.preventDefault();
      setListOpen(true);
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setActive((i) =>
        open ? (i + step + shownList.length) % shownList.length : step > 0 ? 0 : -1,
      );
    } else if (event.key === 'Enter' && open && active >= 0) {
      event.preventDefault();
      pick(shownList[active]!);
    } else if (event.key === 'Escape' && open) {
      // The list closes first; the next Escape closes the field (the form's own handler).
      event.preventDefault();
      event.stopPropagation();
      setListOpen(false);
      setActive(-1);
    }
  };

  return (
    <form
      className="card__transfer-form"
      id={id}
      onKeyDown={(event) => {
        if (event.key !== 'Escape') return;
        // Escape leaves the transfer field (not the card); the popup's own Escape stays for the card.
        event.preventDefault();
        event.stopPropagation();
        onClose();
      }}
      onSubmit={(event) => {
        event.preventDefault();
        send('blind');
      }}
    >
      <label htmlFor={`${id}-to`}>{t.t('popup.transfer-to')}</label>
      <div className="card__transfer-field">
        <input
          id={`${id}-to`}
          type="text"
          dir="auto"
          role={findColleagues ? 'combobox' : undefined}
          aria-autocomplete={findColleagues ? 'list' : undefined}
          aria-expanded={findColleagues ? open : undefined}
          aria-controls={findColleagues ? listId : undefined}
          aria-activedescendant={open && active >= 0 ? `${optionId}-${active}` : undefined}
          aria-describedby={none ? hintId : undefined}
          autoComplete="off"
          spellCheck={false}
          maxLength={64}
          value={text}
          onChange={(event) => {
            setText(event.target.value);
            setPicked(null);
          }}
          onKeyDown={onKey}
          onBlur={() => setListOpen(false)}
          // Opened by the user's own click on Transfer: the field takes the keys next.
          autoFocus
        />
        {findColleagues && (
          <ul
            className="card__colleagues"
            id={listId}
            role="listbox"
            aria-label={t.t('popup.colleagues')}
            hidden={!open}
          >
            {open &&
              shownList.map((c, i) => (
                <li
                  key={c.extension}
                  id={`${optionId}-${i}`}
                  role="option"
                  aria-selected={i === active}
                  aria-label={t.t('popup.colleague-option', {
                    name: c.name,
                    extension: c.extension,
                  })}
                  className="card__colleague"
                  data-extension={c.extension}
                  // Keep the focus in the field: the click picks, the field keeps the keys.
                  onMouseDown={(event) => event.preventDefault()}
                  onClick={() => pick(c)}
                >
                  <InertText text={c.name} className="card__colleague-name" />
                  <span className="number card__colleague-ext" dir="ltr">
                    {c.extension}
                  </span>
                </li>
              ))}
          </ul>
        )}
      </div>
      {none && (
        <p className="card__transfer-hint" id={hintId} data-testid="colleague-none">
          {t.t('popup.colleague-none')}
        </p>
      )}
      <div className="card__transfer-buttons">
        <button type="submit" className="button button--primary" disabled={!target}>
          {t.t('popup.transfer-go')}
        </button>
        <button
          type="button"
          className="button"
          data-action="transfer-consult"
          disabled={!target}
          onClick={() => send('attended')}
        >
          {t.t('popup.transfer-consult')}
        </button>
        <button type="button" className="button" onClick={onClose}>
          {t.t('popup.transfer-cancel')}
        </button>
      </div>
    </form>
  );
}
