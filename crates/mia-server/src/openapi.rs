//! The OpenAPI document served at `/api/openapi.json`, generated from the
//! routes themselves.
//!
//! Every route is added with aide's `api_route`, which records its method and
//! path, and reads its path and query parameters and its request body from
//! the handler's extractors (`Path<T>`, `Query<T>`, `Json<T>`, whose types
//! derive `JsonSchema`). Handlers answer an untyped `Response`, so what a
//! route answers is declared next to it with the [`Answers`] shorthands.
//! The test `every_route_is_in_openapi_json` (tests/openapi.rs) asks the
//! running server which routes it answers and compares them with this
//! document.

use std::sync::OnceLock;

use aide::axum::ApiRouter;
use aide::openapi::{
    Info, MediaType, OpenApi, Operation, Parameter, ParameterData, ParameterSchemaOrContent,
    PathStyle, ReferenceOr, Response, SchemaObject, SecurityScheme, StatusCode,
};
use aide::transform::TransformOperation;
use axum::Router;
use schemars::JsonSchema;
use serde_json::Value;

use crate::AppState;

/// What the document says about the API as a whole.
const DESCRIPTION: &str = "The mia-code runtime over HTTP. Every request except /api/health and /api/openapi.json needs `Authorization: Bearer <token>` (or `?token=` on /api/events). Events stream as Server-Sent Events whose `event:` is the Event's `type`. Every non-2xx answer is `{\"error\": \"...\"}` (the `Error` schema).";

/// The name of the bearer-token security scheme.
pub(crate) const BEARER: &str = "bearer";

/// The document, built once from [`crate::routes`].
static DOCUMENT: OnceLock<Value> = OnceLock::new();

/// OpenAPI 3.1 description of the HTTP API, generated from its routes.
pub fn openapi() -> Value {
    DOCUMENT
        .get_or_init(|| {
            let (public, authed) = crate::routes();
            finish(public.merge(authed)).1
        })
        .clone()
}

/// Turn documented routes into an axum router and the OpenAPI document
/// that describes them.
pub(crate) fn finish(routes: ApiRouter<AppState>) -> (Router<AppState>, Value) {
    let mut api = OpenApi {
        info: Info {
            title: "mia-code server".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: Some(DESCRIPTION.into()),
            ..Info::default()
        },
        ..OpenApi::default()
    };
    let router = routes.finish_api_with(&mut api, |t| {
        t.security_scheme(
            BEARER,
            SecurityScheme::Http {
                scheme: "bearer".into(),
                bearer_format: None,
                description: Some(
                    "The per-launch token `mia-code serve` prints (also in $MIA_CODE_HOME/server.json)"
                        .into(),
                ),
                extensions: Default::default(),
            },
        )
    });
    let mut doc = serde_json::to_value(&api).unwrap_or(Value::Null);
    errors_as_json(&mut doc);
    drop_unused_schemas(&mut doc);
    (router, doc)
}

/// Drop the schemas nothing refers to: aide registers the query and path
/// types too, though their fields become parameters.
fn drop_unused_schemas(doc: &mut Value) {
    const PREFIX: &str = "#/components/schemas/";
    /// Every schema name `v` refers to.
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    match (k.as_str(), v.as_str().and_then(|r| r.strip_prefix(PREFIX))) {
                        ("$ref", Some(name)) => out.push(name.to_string()),
                        _ => refs(v, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let mut todo = Vec::new();
    refs(&doc["paths"], &mut todo);
    let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let mut used = std::collections::BTreeSet::new();
    while let Some(name) = todo.pop() {
        if let Some(schema) = schemas.get(&name)
            && used.insert(name)
        {
            refs(schema, &mut todo);
        }
    }
    schemas.retain(|name, _| used.contains(name));
}

/// Every error answer has the `{"error": …}` body (the server's
/// `api_errors` layer rewrites axum's plain-text rejections), and every
/// operation may answer one.
fn errors_as_json(doc: &mut Value) {
    let error = serde_json::json!({
        "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
    });
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for op in paths
        .values_mut()
        .filter_map(Value::as_object_mut)
        .flat_map(|item| item.values_mut())
    {
        let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else {
            continue;
        };
        for (code, res) in responses.iter_mut() {
            let plain = res
                .get("content")
                .and_then(Value::as_object)
                .is_none_or(|c| !c.contains_key("application/json"));
            if code.starts_with(['4', '5']) && plain {
                res["content"] = error.clone();
            }
        }
        responses.entry("default").or_insert_with(|| {
            serde_json::json!({"description": "An error: what was wrong and how to fix it", "content": error})
        });
    }
}

/// The body of every error answer.
#[derive(serde::Serialize, JsonSchema)]
#[schemars(rename = "Error")]
pub(crate) struct ApiError {
    /// What was wrong and how to fix it.
    pub(crate) error: String,
    /// `would_lose` when refused because work would be lost (retry with
    /// `force`, which keeps a copy in the trash).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<String>,
}

/// Shorthands for what a route answers, on aide's operation transform.
/// Each replaces what was said before for the same status.
pub(crate) trait Answers: Sized {
    /// Answers status `N` with a JSON body of type `T`.
    fn json<const N: u16, T: JsonSchema>(self, description: &str) -> Self;
    /// Answers status `N` with the `{"error": …}` body.
    fn error<const N: u16>(self, description: &str) -> Self;
    /// Answers status `N` with no body.
    fn empty<const N: u16>(self, description: &str) -> Self;
    /// Answers 200 with a stream of Server-Sent Events whose data are `T`.
    fn events<T: JsonSchema>(self, description: &str) -> Self;
    /// A path parameter the handler reads without a named type (`Path<i64>`).
    fn path_param<T: JsonSchema>(self, name: &str, description: &str) -> Self;
    /// The request body may be left out (an `Option<Json<T>>` extractor).
    fn optional_body(self) -> Self;
    /// A query parameter of a shared query type that this route ignores.
    fn ignores(self, parameter: &str) -> Self;
}

impl Answers for TransformOperation<'_> {
    fn json<const N: u16, T: JsonSchema>(self, description: &str) -> Self {
        let res = with_body::<T>("application/json", description);
        respond(self, N, res)
    }

    fn error<const N: u16>(self, description: &str) -> Self {
        let res = with_body::<ApiError>("application/json", description);
        respond(self, N, res)
    }

    fn empty<const N: u16>(self, description: &str) -> Self {
        let res = Response {
            description: description.into(),
            ..Response::default()
        };
        respond(self, N, res)
    }

    fn events<T: JsonSchema>(self, description: &str) -> Self {
        let res = with_body::<T>("text/event-stream", description);
        respond(self, 200, res)
    }

    fn path_param<T: JsonSchema>(mut self, name: &str, description: &str) -> Self {
        let json_schema = aide::generate::in_context(|ctx| ctx.schema.subschema_for::<T>());
        let param = Parameter::Path {
            parameter_data: ParameterData {
                name: name.into(),
                description: Some(description.into()),
                required: true,
                deprecated: None,
                format: ParameterSchemaOrContent::Schema(SchemaObject {
                    json_schema,
                    example: None,
                    external_docs: None,
                }),
                example: None,
                examples: Default::default(),
                explode: None,
                extensions: Default::default(),
            },
            style: PathStyle::Simple,
        };
        self.inner_mut().parameters.push(ReferenceOr::Item(param));
        self
    }

    fn optional_body(mut self) -> Self {
        if let Some(ReferenceOr::Item(body)) = &mut self.inner_mut().request_body {
            body.required = false;
        }
        self
    }

    fn ignores(self, parameter: &str) -> Self {
        self.parameter_untyped(parameter, |p| p.hidden(true))
    }
}

/// A response whose body is `T` as `media_type`.
fn with_body<T: JsonSchema>(media_type: &str, description: &str) -> Response {
    let json_schema = aide::generate::in_context(|ctx| ctx.schema.subschema_for::<T>());
    let mut res = Response {
        description: description.into(),
        ..Response::default()
    };
    res.content.insert(
        media_type.into(),
        MediaType {
            schema: Some(SchemaObject {
                json_schema,
                example: None,
                external_docs: None,
            }),
            ..MediaType::default()
        },
    );
    res
}

/// Set the response for `status`: a declared one replaces what aide inferred
/// from the extractors (e.g. its plain-text 400 for a malformed JSON body),
/// keeping the inferred description after the declared one.
fn respond(
    mut op: TransformOperation<'_>,
    status: u16,
    mut res: Response,
) -> TransformOperation<'_> {
    let operation: &mut Operation = op.inner_mut();
    let responses = operation.responses.get_or_insert_with(Default::default);
    let code = StatusCode::Code(status);
    if let Some(ReferenceOr::Item(before)) = responses.responses.get(&code)
        && !before.description.is_empty()
    {
        res.description = format!("{}; or {}", res.description, before.description);
    }
    responses.responses.insert(code, ReferenceOr::Item(res));
    op
}

/// Shapes of the answers that handlers build with `json!` (documentation
/// only: the handlers' bodies are left as they are).
#[allow(dead_code, reason = "documentation only: never built")]
pub(crate) mod shapes {
    use mia_protocol::{
        AgentProposal, CompactResult, RevertSummary, Session, TrashView, WorktreeCreated,
    };
    use schemars::JsonSchema;

    /// Liveness (`GET /api/health`).
    #[derive(JsonSchema)]
    pub(crate) struct Health {
        pub(crate) ok: bool,
        /// The server's version.
        pub(crate) version: String,
        /// A scripted demo (the token screen says so).
        pub(crate) demo: bool,
    }

    /// An Op was accepted; its effects follow on `/api/events`.
    #[derive(JsonSchema)]
    pub(crate) struct Accepted {
        /// Always `true`.
        pub(crate) ok: bool,
    }

    /// What an Op sent to `/api/op` answers with 200.
    #[derive(JsonSchema)]
    #[serde(untagged)]
    pub(crate) enum OpAnswer {
        Session(Box<Session>),
        Reverted(RevertSummary),
        Compacted(CompactResult),
    }

    /// What "open in editor" started.
    #[derive(JsonSchema)]
    pub(crate) struct Opened {
        /// The command line that was started.
        pub(crate) command: String,
    }

    /// A saved agent file.
    #[derive(JsonSchema)]
    pub(crate) struct SavedAgent {
        /// Where the agent file was written.
        pub(crate) path: String,
        /// The proposal as checked and saved.
        pub(crate) proposal: AgentProposal,
    }

    /// How many review comments were deleted.
    #[derive(JsonSchema)]
    pub(crate) struct Cleared {
        pub(crate) cleared: usize,
    }

    /// What a worktree operation kept in the trash, if anything.
    #[derive(JsonSchema)]
    pub(crate) struct Trashed {
        pub(crate) trash: Option<TrashView>,
    }

    /// A trash entry brought back.
    #[derive(JsonSchema)]
    pub(crate) struct Restored {
        pub(crate) trash: TrashView,
        /// Where its files went.
        pub(crate) into: String,
    }

    /// One attempt of "try N ways".
    #[derive(JsonSchema)]
    pub(crate) struct Attempt {
        pub(crate) worktree: WorktreeCreated,
        pub(crate) session: Session,
    }

    /// The attempts "try N ways" started.
    #[derive(JsonSchema)]
    pub(crate) struct Attempts {
        pub(crate) attempts: Vec<Attempt>,
    }

    /// A failure part-way through "try N ways": the attempts already made
    /// are real worktrees and sessions.
    #[derive(JsonSchema)]
    pub(crate) struct AttemptsFailed {
        pub(crate) error: String,
        pub(crate) attempts: Vec<Attempt>,
    }
}

#[cfg(test)]
mod tests {
    /// aide reports what it could not document (a parameter declared twice,
    /// a hidden parameter that does not exist, …) to an error handler: none
    /// is expected.
    #[test]
    fn the_routes_are_documented_without_errors() {
        let errors = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let seen = errors.clone();
        aide::generate::on_error(move |e| seen.borrow_mut().push(e.to_string()));
        let (public, authed) = crate::routes();
        let (_, doc) = super::finish(public.merge(authed));
        assert!(errors.borrow().is_empty(), "{:?}", errors.borrow());
        assert!(doc["paths"].as_object().is_some_and(|p| p.len() > 40));
    }
}
