/**
 * One `Intl.DateTimeFormat` per time zone, made at first use and kept: making one costs far more
 * than using it, and a bot asks for the same few zones on every slot and event.
 */
export function zoneFormats(
  locale: string,
  options: Omit<Intl.DateTimeFormatOptions, 'timeZone'>,
): (timeZone: string) => Intl.DateTimeFormat {
  const formats = new Map<string, Intl.DateTimeFormat>();
  return (timeZone) => {
    let format = formats.get(timeZone);
    if (format === undefined) {
      format = new Intl.DateTimeFormat(locale, { ...options, timeZone });
      formats.set(timeZone, format);
    }
    return format;
  };
}
