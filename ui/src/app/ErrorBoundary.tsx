import { Component, type ErrorInfo, type ReactNode } from "react";

/** Keeps one broken area (a panel, the transcript) from blanking the whole window. */
export class ErrorBoundary extends Component<{ label: string; children: ReactNode }, { error: Error | null }> {
  override state: { error: Error | null } = { error: null };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  override componentDidCatch(error: Error, info: ErrorInfo) {
    console.error(`${this.props.label} failed`, error, info.componentStack);
  }

  override render() {
    if (!this.state.error) return this.props.children;
    return (
      <div className="error-banner" role="alert" data-testid="area-error">
        <span>
          {this.props.label} could not be shown: {this.state.error.message}
        </span>
        <button type="button" className="btn small" onClick={() => this.setState({ error: null })}>
          Try again
        </button>
      </div>
    );
  }
}
