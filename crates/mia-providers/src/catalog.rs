//! The bundled model catalog: context window, output limit and prices, used
//! for cost tracking and compaction thresholds. Unknown models still work;
//! their cost is reported as unknown (`None`), never as zero.

use std::sync::LazyLock;

use crate::types::{ModelRef, TokenUsage};

/// The date the prices below were taken from the providers' price pages.
pub const PRICES_AS_OF: &str = "2025-11";

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

const fn p(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Prices {
    Prices {
        input,
        output,
        cache_read,
        cache_write,
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    pub provider: &'static str,
    pub id: &'static str,
    /// Other names accepted for this model; the canonical `id` is sent.
    pub aliases: &'static [&'static str],
    pub context_window: u64,
    pub max_output: u32,
    pub prices: Prices,
    /// Higher prices when the prompt exceeds `.0` tokens (Gemini 2.5 Pro).
    pub long_context: Option<(u64, Prices)>,
    /// Accepts a reasoning effort / thinking budget.
    pub reasoning: bool,
}

impl ModelInfo {
    /// Cost of one response in US dollars.
    pub fn cost(&self, usage: &TokenUsage) -> f64 {
        let prompt = usage.input + usage.cache_read + usage.cache_write;
        let prices = match self.long_context {
            Some((threshold, long)) if prompt > threshold => long,
            _ => self.prices,
        };
        (usage.input as f64 * prices.input
            + usage.output as f64 * prices.output
            + usage.cache_read as f64 * prices.cache_read
            + usage.cache_write as f64 * prices.cache_write)
            / 1_000_000.0
    }
}

#[derive(Debug)]
pub struct Catalog {
    models: Vec<ModelInfo>,
}

fn m(
    provider: &'static str,
    id: &'static str,
    aliases: &'static [&'static str],
    context_window: u64,
    max_output: u32,
    prices: Prices,
    reasoning: bool,
) -> ModelInfo {
    ModelInfo {
        provider,
        id,
        aliases,
        context_window,
        max_output,
        prices,
        long_context: None,
        reasoning,
    }
}

static BUILTIN: LazyLock<Catalog> = LazyLock::new(|| {
    const A: &str = "anthropic";
    const O: &str = "openai";
    const G: &str = "google";
    let mut models = vec![
        m(
            A,
            "claude-opus-4-5-20251101",
            &["claude-opus-4-5"],
            200_000,
            64_000,
            p(5.0, 25.0, 0.5, 6.25),
            true,
        ),
        m(
            A,
            "claude-opus-4-1-20250805",
            &["claude-opus-4-1"],
            200_000,
            32_000,
            p(15.0, 75.0, 1.5, 18.75),
            true,
        ),
        m(
            A,
            "claude-opus-4-20250514",
            &["claude-opus-4", "claude-opus-4-0"],
            200_000,
            32_000,
            p(15.0, 75.0, 1.5, 18.75),
            true,
        ),
        m(
            A,
            "claude-sonnet-4-5-20250929",
            &["claude-sonnet-4-5"],
            200_000,
            64_000,
            p(3.0, 15.0, 0.3, 3.75),
            true,
        ),
        m(
            A,
            "claude-sonnet-4-20250514",
            &["claude-sonnet-4", "claude-sonnet-4-0"],
            200_000,
            64_000,
            p(3.0, 15.0, 0.3, 3.75),
            true,
        ),
        m(
            A,
            "claude-3-7-sonnet-20250219",
            &["claude-3-7-sonnet-latest"],
            200_000,
            64_000,
            p(3.0, 15.0, 0.3, 3.75),
            true,
        ),
        m(
            A,
            "claude-haiku-4-5-20251001",
            &["claude-haiku-4-5"],
            200_000,
            64_000,
            p(1.0, 5.0, 0.1, 1.25),
            true,
        ),
        // Spec 016 writes this model as `claude-haiku-3-5-20241022`; both names work.
        m(
            A,
            "claude-3-5-haiku-20241022",
            &[
                "claude-haiku-3-5-20241022",
                "claude-3-5-haiku-latest",
                "claude-haiku-3-5",
            ],
            200_000,
            8_192,
            p(0.8, 4.0, 0.08, 1.0),
            false,
        ),
        // OpenAI does not charge for cache writes: the write price is the input price.
        m(
            O,
            "gpt-5.1",
            &[],
            400_000,
            128_000,
            p(1.25, 10.0, 0.125, 1.25),
            true,
        ),
        m(
            O,
            "gpt-5",
            &[],
            400_000,
            128_000,
            p(1.25, 10.0, 0.125, 1.25),
            true,
        ),
        m(
            O,
            "gpt-5-mini",
            &[],
            400_000,
            128_000,
            p(0.25, 2.0, 0.025, 0.25),
            true,
        ),
        m(
            O,
            "gpt-5-nano",
            &[],
            400_000,
            128_000,
            p(0.05, 0.4, 0.005, 0.05),
            true,
        ),
        m(
            O,
            "gpt-4.1",
            &[],
            1_047_576,
            32_768,
            p(2.0, 8.0, 0.5, 2.0),
            false,
        ),
        m(
            O,
            "gpt-4.1-mini",
            &[],
            1_047_576,
            32_768,
            p(0.4, 1.6, 0.1, 0.4),
            false,
        ),
        m(
            O,
            "gpt-4.1-nano",
            &[],
            1_047_576,
            32_768,
            p(0.1, 0.4, 0.025, 0.1),
            false,
        ),
        m(
            O,
            "gpt-4o",
            &[],
            128_000,
            16_384,
            p(2.5, 10.0, 1.25, 2.5),
            false,
        ),
        m(
            O,
            "gpt-4o-mini",
            &[],
            128_000,
            16_384,
            p(0.15, 0.6, 0.075, 0.15),
            false,
        ),
        m(O, "o3", &[], 200_000, 100_000, p(2.0, 8.0, 0.5, 2.0), true),
        m(
            O,
            "o4-mini",
            &[],
            200_000,
            100_000,
            p(1.1, 4.4, 0.275, 1.1),
            true,
        ),
        m(
            G,
            "gemini-2.5-flash",
            &[],
            1_048_576,
            65_536,
            p(0.3, 2.5, 0.03, 0.3),
            true,
        ),
        m(
            G,
            "gemini-2.5-flash-lite",
            &[],
            1_048_576,
            65_536,
            p(0.1, 0.4, 0.01, 0.1),
            true,
        ),
        m(
            G,
            "gemini-2.0-flash",
            &[],
            1_048_576,
            8_192,
            p(0.1, 0.4, 0.025, 0.1),
            false,
        ),
    ];
    let mut g3 = m(
        G,
        "gemini-3-pro-preview",
        &[],
        1_048_576,
        65_536,
        p(2.0, 12.0, 0.2, 2.0),
        true,
    );
    g3.long_context = Some((200_000, p(4.0, 18.0, 0.4, 4.0)));
    models.push(g3);
    let mut pro = m(
        G,
        "gemini-2.5-pro",
        &[],
        1_048_576,
        65_536,
        p(1.25, 10.0, 0.125, 1.25),
        true,
    );
    pro.long_context = Some((200_000, p(2.5, 15.0, 0.25, 2.5)));
    models.push(pro);
    Catalog { models }
});

/// The catalog compiled into this build.
pub fn builtin() -> &'static Catalog {
    &BUILTIN
}

/// `-20250514` or `-2025-04-14` at the end of a model id.
fn strip_date_suffix(id: &str) -> Option<&str> {
    let bytes = id.as_bytes();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    if id.len() > 9 && bytes[id.len() - 9] == b'-' && digits(&bytes[id.len() - 8..]) {
        return id.get(..id.len() - 9);
    }
    if id.len() > 11 {
        let tail = &bytes[id.len() - 11..];
        if tail[0] == b'-'
            && digits(&tail[1..5])
            && tail[5] == b'-'
            && digits(&tail[6..8])
            && tail[8] == b'-'
            && digits(&tail[9..11])
        {
            return id.get(..id.len() - 11);
        }
    }
    None
}

impl Catalog {
    pub fn models(&self) -> &[ModelInfo] {
        &self.models
    }

    /// Find a model by provider and id (canonical id, alias, or a dated
    /// snapshot of a listed model such as `gpt-4.1-2025-04-14`). Providers
    /// other than `anthropic`, `openai` and `google` (`local`, gateways)
    /// have no bundled entries.
    pub fn lookup(&self, provider: &str, model: &str) -> Option<&ModelInfo> {
        let find = |id: &str| {
            self.models
                .iter()
                .find(|m| m.provider == provider && (m.id == id || m.aliases.contains(&id)))
        };
        find(model).or_else(|| strip_date_suffix(model).and_then(find))
    }

    pub fn lookup_ref(&self, model: &ModelRef) -> Option<&ModelInfo> {
        self.lookup(&model.provider_id, &model.model_id)
    }

    /// The id to send on the wire: an alias becomes its canonical id,
    /// anything else is sent as given.
    pub fn wire_id(&self, provider: &str, model: &str) -> String {
        self.models
            .iter()
            .find(|m| m.provider == provider && m.aliases.contains(&model))
            .map_or_else(|| model.to_string(), |m| m.id.to_string())
    }

    /// Whether to send a reasoning effort / thinking budget: known models
    /// say so; unknown models get what the caller asked for.
    pub fn accepts_reasoning(&self, provider: &str, model: &str) -> bool {
        self.lookup(provider, model).is_none_or(|m| m.reasoning)
    }

    /// Cost in US dollars, `None` when the model's prices are unknown.
    pub fn cost(&self, model: &ModelRef, usage: &TokenUsage) -> Option<f64> {
        self.lookup_ref(model).map(|m| m.cost(usage))
    }

    /// The fast/cheap model used by the explore agent (spec 016).
    pub fn fast_model(&self, provider: &str) -> Option<ModelRef> {
        let id = match provider {
            "anthropic" => "claude-haiku-3-5-20241022",
            "google" => "gemini-2.5-flash",
            "openai" => "gpt-4.1-mini",
            _ => return None,
        };
        Some(ModelRef::new(provider, id))
    }

    /// The model an old `engineChoice` stands for (spec 016).
    pub fn engine_default(engine: &str) -> Option<ModelRef> {
        match engine {
            "gemini" => Some(ModelRef::new("google", "gemini-2.5-pro")),
            "claude" => Some(ModelRef::new("anthropic", "claude-sonnet-4")),
            _ => None,
        }
    }
}

/// A cost for display: `"$0.0123"` or `"unknown"`.
pub fn format_cost(cost: Option<f64>) -> String {
    match cost {
        Some(c) => format!("${c:.4}"),
        None => "unknown".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_models_are_known() {
        let c = builtin();
        for (p, id) in [
            ("anthropic", "claude-sonnet-4-20250514"),
            ("anthropic", "claude-opus-4-20250514"),
            ("anthropic", "claude-haiku-3-5-20241022"),
            ("anthropic", "claude-opus-4"),
            ("google", "gemini-2.5-pro"),
            ("google", "gemini-2.5-flash"),
            ("google", "gemini-2.0-flash"),
            ("openai", "gpt-4.1"),
            ("openai", "o3"),
            ("openai", "gpt-4.1-mini"),
            ("openai", "gpt-4.1-2025-04-14"),
        ] {
            assert!(c.lookup(p, id).is_some(), "{p}/{id}");
        }
        assert_eq!(
            c.wire_id("anthropic", "claude-haiku-3-5-20241022"),
            "claude-3-5-haiku-20241022"
        );
        assert_eq!(c.wire_id("anthropic", "claude-custom"), "claude-custom");
        assert!(c.lookup("local", "gpt-4.1").is_none());
        for r in ["anthropic", "google", "openai"] {
            let fast = c.fast_model(r).unwrap();
            assert!(c.lookup_ref(&fast).is_some(), "{fast}");
        }
        let claude = Catalog::engine_default("claude").unwrap();
        assert!(c.lookup_ref(&claude).is_some());
    }

    #[test]
    fn cost_uses_all_four_prices() {
        let usage = TokenUsage {
            input: 1_000_000,
            output: 100_000,
            cache_read: 2_000_000,
            cache_write: 400_000,
        };
        let cost = builtin()
            .cost(
                &ModelRef::new("anthropic", "claude-sonnet-4-20250514"),
                &usage,
            )
            .unwrap();
        // 3.00 + 1.50 + 0.60 + 1.50
        assert!((cost - 6.6).abs() < 1e-9, "{cost}");
        assert_eq!(
            builtin().cost(&ModelRef::new("local", "llama3.2"), &usage),
            None
        );
        assert_eq!(format_cost(None), "unknown");
    }

    #[test]
    fn long_context_tier_applies_above_threshold() {
        let pro = builtin().lookup("google", "gemini-2.5-pro").unwrap();
        let small = TokenUsage {
            input: 100_000,
            output: 0,
            cache_read: 0,
            cache_write: 0,
        };
        let big = TokenUsage {
            input: 300_000,
            output: 0,
            cache_read: 0,
            cache_write: 0,
        };
        assert!((pro.cost(&small) - 0.125).abs() < 1e-9);
        assert!((pro.cost(&big) - 0.75).abs() < 1e-9);
    }

    #[test]
    fn catalog_ids_are_unique() {
        let c = builtin();
        let mut names: Vec<(&str, &str)> = Vec::new();
        for m in c.models() {
            for n in std::iter::once(&m.id).chain(m.aliases.iter()) {
                assert!(!names.contains(&(m.provider, n)), "duplicate {n}");
                names.push((m.provider, n));
            }
        }
    }
}
