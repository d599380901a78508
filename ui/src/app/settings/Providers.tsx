import { useState } from "react";
import type { ProviderInfo } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { useServices, useToast } from "../context";

/** Settings → Providers: each configured provider with where its key comes from, and a field to set one. */
export function Providers({ providers, onChanged }: { providers: ProviderInfo[]; onChanged: () => void }) {
  return (
    <section>
      <h3>Providers</h3>
      <table className="table">
        <thead>
          <tr>
            <th>Provider</th>
            <th>Kind</th>
            <th>Base URL</th>
            <th>Key</th>
            <th>Set key</th>
          </tr>
        </thead>
        <tbody>
          {providers.map((p) => (
            <ProviderRow key={p.id} provider={p} onChanged={onChanged} />
          ))}
        </tbody>
      </table>
      <p className="muted small">
        Keys go to the OS keychain (or Mia Code's 0600 credentials file); the UI never keeps them.
      </p>
    </section>
  );
}

function ProviderRow({ provider, onChanged }: { provider: ProviderInfo; onChanged: () => void }) {
  const { api } = useServices();
  const toast = useToast();
  const [key, setKey] = useState("");
  const [busy, setBusy] = useState(false);
  const save = async () => {
    setBusy(true);
    try {
      await api.setKey(provider.id, key);
      setKey("");
      toast(`Key saved for ${provider.id}`, "info");
      onChanged();
    } catch (e) {
      toast(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    try {
      await api.removeKey(provider.id);
      toast(`Key removed for ${provider.id}`, "info");
      onChanged();
    } catch (e) {
      toast(errorMessage(e));
    }
  };
  return (
    <tr data-testid="provider-row" data-provider={provider.id}>
      <td className="mono">{provider.id}</td>
      <td>{provider.kind}</td>
      <td className="mono small">{provider.base_url ?? "default"}</td>
      <td className="small">{provider.key_source ?? <span className="muted">none</span>}</td>
      <td>
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (key) void save();
          }}
        >
          <input
            className="input"
            type="password"
            autoComplete="off"
            aria-label={`API key for ${provider.id}`}
            data-testid="provider-key"
            value={key}
            onChange={(e) => setKey(e.target.value)}
          />
          <button type="submit" className="btn small" disabled={!key || busy}>
            Save
          </button>
          {provider.key_source && /keychain|file/i.test(provider.key_source) && !/config|env/i.test(provider.key_source) && (
            <button type="button" className="btn small" onClick={() => void remove()}>
              Remove
            </button>
          )}
        </form>
      </td>
    </tr>
  );
}
