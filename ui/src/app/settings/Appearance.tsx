import { Label, Radio, RadioGroup } from "react-aria-components";
import { AskStyle } from "./AskStyle";
import { setTheme, THEME_CHOICES, useTheme, type ThemeChoice } from "../theme";

const THEME_LABELS: Record<ThemeChoice, string> = { system: "Follow the system", light: "Light", dark: "Dark" };

/** The window's theme (remembered by this window's storage; app/theme.ts). */
export function Appearance() {
  const theme = useTheme();
  return (
    <section className="settings-appearance">
      <RadioGroup
        className="segmented"
        orientation="horizontal"
        value={theme}
        onChange={(v) => setTheme(v as ThemeChoice)}
        data-testid="theme-choice"
      >
        <Label className="segmented-label">Theme</Label>
        <div className="segmented-options">
          {THEME_CHOICES.map((c) => (
            <Radio key={c} value={c} className="segmented-option" data-testid={`theme-${c}`}>
              {THEME_LABELS[c]}
            </Radio>
          ))}
        </div>
      </RadioGroup>
      <AskStyle />
    </section>
  );
}
