// What every screen of the page offers the shell (app.ts).

export type Screen = {
  /** The hash it answers to: `#rules`, `#intents/<commandId>`. */
  readonly id: string;
  readonly title: string;
  readonly root: HTMLElement;
  /** Called each time the screen is shown, with the rest of the hash (`intents/<arg>`). */
  show(arg: string | undefined): void;
};

/** What the user may do: read-only consoles show no buttons that change anything. */
export type Permissions = { readonly readOnly: boolean };
