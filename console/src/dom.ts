// The one way the page builds DOM: elements with attributes and children, where a string child
// becomes a text node. Nothing here parses HTML, so a ledger value such as `<img onerror=…>`
// can only ever be shown as the text it is (docs/console.md, "Security").

export type Child = Node | string | number | null | undefined | false | readonly Child[];

type Props = {
  readonly class?: string | undefined;
  readonly title?: string | undefined;
  readonly id?: string | undefined;
  readonly type?: string | undefined;
  readonly value?: string | undefined;
  readonly placeholder?: string | undefined;
  readonly href?: string | undefined;
  readonly for?: string | undefined;
  readonly name?: string | undefined;
  readonly disabled?: boolean | undefined;
  readonly hidden?: boolean | undefined;
  readonly required?: boolean | undefined;
  readonly autocomplete?: string | undefined;
  readonly role?: string | undefined;
  readonly 'aria-label'?: string | undefined;
  readonly 'aria-live'?: string | undefined;
  readonly 'aria-hidden'?: string | undefined;
  readonly 'data-testid'?: string | undefined;
  readonly datetime?: string | undefined;
  readonly colspan?: string | undefined;
  readonly onclick?: ((event: MouseEvent) => void) | undefined;
  readonly onchange?: ((event: Event) => void) | undefined;
  readonly onsubmit?: ((event: SubmitEvent) => void) | undefined;
};

function append(parent: Node, child: Child): void {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) {
    for (const c of child as readonly Child[]) append(parent, c);
    return;
  }
  parent.appendChild(
    child instanceof Node
      ? child
      : document.createTextNode(visibleText(String(child as string | number))),
  );
}

/**
 * Text as the page shows it: the bidirectional overrides, embeddings and isolates a ledger value
 * may carry (`"RTL \u202Egnp.exe"` shows as "RTL exe.png") are written out as `⟨U+202E⟩`, so the
 * console never shows text other than what is stored. Right-to-left scripts need none of them.
 */
export function visibleText(text: string): string {
  return text.replace(
    /[\u202a-\u202e\u2066-\u2069]/g,
    (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`,
  );
}

/** An HTML element; `props` become attributes (text, never markup) and listeners. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {}) as [
    string,
    string | number | boolean | ((e: Event) => void) | undefined,
  ][]) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else if (key === 'value' && 'value' in el) {
      (el as HTMLInputElement).value = String(value);
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element with attributes. */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Readonly<Record<string, string | number>>,
  ...children: Child[]
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) el.setAttribute(key, String(value));
  append(el, children);
  return el;
}

/**
 * Replaces a container's content. Live updates re-render screens: a control that had the focus
 * inside the container gets it back in the new content (the same kind of element, with the same
 * test id and text, at the same position among its likes), so a keyboard or screen-reader user
 * does not lose their place to every event.
 */
export function show(container: Element, ...children: Child[]): void {
  const focused = document.activeElement;
  const place =
    focused instanceof HTMLElement && focused !== container && container.contains(focused)
      ? placeOf(container, focused)
      : undefined;
  const fragment = document.createDocumentFragment();
  append(fragment, children);
  container.replaceChildren(fragment);
  if (place === undefined) return;
  const again = likesOf(container, place.element)[place.index];
  again?.focus({ preventScroll: true });
}

/** Elements of the container like `el`: same tag, test id and text. */
function likesOf(container: Element, el: HTMLElement): HTMLElement[] {
  const same = (other: Element): boolean =>
    other.tagName === el.tagName &&
    other.getAttribute('data-testid') === el.getAttribute('data-testid') &&
    other.textContent === el.textContent;
  return [...container.querySelectorAll<HTMLElement>(el.tagName)].filter(same);
}

function placeOf(
  container: Element,
  el: HTMLElement,
): { element: HTMLElement; index: number } | undefined {
  const index = likesOf(container, el).indexOf(el);
  return index < 0 ? undefined : { element: el, index };
}
