import { useCallback, type ChangeEvent, type KeyboardEvent, type Ref, type TextareaHTMLAttributes } from "react";
import { FieldInputContext, useSlottedContext } from "react-aria-components";

/**
 * The composer's textarea as the input of react-aria-components' `Autocomplete` (the one combobox
 * implementation of the app, as in the model picker and the command palette): it takes the
 * Autocomplete's value handling, the virtual focus in the suggestions (`aria-activedescendant`,
 * `aria-controls`, focus and blur) and hands it the arrow keys while `navigate` (the suggestions
 * are open and have options). Every other key is the composer's own (`onKeyDown`): Enter sends or
 * picks, Tab picks or switches the mode, Escape closes or stops, Up/Down walk the history when no
 * suggestion is open.
 */
export function PromptField({
  ref,
  navigate,
  onChange,
  onKeyDown,
  ...props
}: Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, "onChange" | "onKeyDown"> & {
  ref: Ref<HTMLTextAreaElement>;
  navigate: boolean;
  onChange: (e: ChangeEvent<HTMLTextAreaElement>) => void;
  onKeyDown: (e: KeyboardEvent<HTMLTextAreaElement>) => void;
}) {
  const field = useSlottedContext(FieldInputContext);
  const fieldRef = field?.ref;
  const setRef = useCallback(
    (el: HTMLTextAreaElement | null) => {
      for (const r of [ref, fieldRef]) {
        if (typeof r === "function") r(el);
        else if (r) r.current = el;
      }
    },
    [ref, fieldRef],
  );
  return (
    <textarea
      {...props}
      ref={setRef}
      aria-controls={field?.["aria-controls"]}
      aria-activedescendant={field?.["aria-activedescendant"]}
      aria-autocomplete="list"
      onFocus={field?.onFocus}
      onBlur={field?.onBlur}
      onChange={(e) => {
        // The Autocomplete hears the new value: typing forward makes the first suggestion current.
        field?.onChange?.(e.target.value);
        onChange(e);
      }}
      onKeyDown={(e) => {
        if (navigate && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
          // react-aria's keyboard events can be told to go on to the parents: these stop here.
          field?.onKeyDown?.(Object.assign(e, { continuePropagation: () => undefined }));
          return;
        }
        onKeyDown(e);
      }}
    />
  );
}
