import { useEffect, useState } from "react";
import type { SettingsView } from "../../protocol/generated";
import type { UpdateStatus, Updates as Updater } from "../../transport";
import { errorMessage } from "../../lib/api";
import { useServices, useToast } from "../context";

/** Settings → Updates: the check at start (`updates.check`) and, in the
 * desktop app, the update channel's state with "Check now" and an install
 * button that is the only way anything gets installed. */
export function Updates({ view, onSaved }: { view: SettingsView; onSaved: (v: SettingsView) => void }) {
  const { api, platform } = useServices();
  const toast = useToast();
  const updater = platform.updates;
  const [status, setStatus] = useState<UpdateStatus | null>(null);
  useEffect(() => {
    if (!updater) return;
    let live = true;
    updater.status().then(
      (s) => {
        if (live) setStatus(s);
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [updater]);
  const toggle = async (check: boolean) => {
    try {
      onSaved(await api.updateSettings({ updates_check: check, agent_models: {} }));
    } catch (e) {
      toast(errorMessage(e));
    }
  };
  return (
    <section data-testid="settings-updates">
      <h3>Updates</h3>
      <label className="check">
        <input
          type="checkbox"
          checked={view.updates_check ?? true}
          onChange={(e) => void toggle(e.target.checked)}
          data-testid="updates-check"
        />{" "}
        Check for a new version when Mia Code starts
      </label>
      {updater ? (
        status && <UpdateState updater={updater} status={status} onStatus={setStatus} />
      ) : (
        <p className="muted small">
          This is the browser UI of <span className="mono">mia-code serve</span>: update the mia-code command line
          where you installed it.
        </p>
      )}
    </section>
  );
}

function UpdateState({
  updater,
  status,
  onStatus,
}: {
  updater: Updater;
  status: UpdateStatus;
  onStatus: (s: UpdateStatus) => void;
}) {
  const toast = useToast();
  const [busy, setBusy] = useState(false);
  const check = async () => {
    setBusy(true);
    try {
      onStatus(await updater.check());
    } catch (e) {
      toast(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const install = async () => {
    setBusy(true);
    onStatus({ ...status, state: "installing" });
    try {
      await updater.install();
    } catch (e) {
      toast(errorMessage(e));
      onStatus(await updater.status().catch(() => status));
    } finally {
      setBusy(false);
    }
  };
  if (!status.channel)
    return (
      <p className="muted small" data-testid="update-state" data-state="no-channel">
        Mia Code {status.current}. This build has no update channel (built from source, or without the release key), so
        it never looks for updates: install a release to get them.
      </p>
    );
  const line =
    status.state === "checking"
      ? "Checking…"
      : status.state === "up-to-date"
        ? "You have the latest version."
        : status.state === "installing"
          ? "Installing… Mia Code restarts when it is done."
          : status.state === "failed"
            ? (status.error ?? "The last check failed.")
            : status.state === "available" && status.available
              ? `Mia Code ${status.available.version} is available.`
              : "Not checked yet.";
  return (
    <div data-testid="update-state" data-state={status.state}>
      <p className={status.state === "failed" ? "warn-text" : ""}>
        Mia Code {status.current}. {line}
      </p>
      {status.state === "available" && status.available?.notes && (
        <pre className="update-notes">{status.available.notes}</pre>
      )}
      <div className="row-end">
        <button type="button" className="btn" disabled={busy} onClick={() => void check()} data-testid="update-check-now">
          Check now
        </button>
        {status.state === "available" &&
          (status.installer === "self-update" ? (
            <button
              type="button"
              className="btn primary"
              disabled={busy}
              onClick={() => void install()}
              data-testid="update-install"
            >
              Install and restart
            </button>
          ) : (
            <span className="muted small">
              {status.installer === "package-manager"
                ? "Installed with your package manager: update Mia Code there (apt, dnf)."
                : "This copy was not installed from a bundle; install the new release."}
            </span>
          ))}
      </div>
    </div>
  );
}
