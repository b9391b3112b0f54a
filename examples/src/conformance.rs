//! Group `conformance`: the tools the official MCP conformance suite calls, written with the
//! framework's own attributes. Served in the stateful mode (sessions, resumable SSE).

use std::time::Duration;

use mcp_runtime::mcp::input::{Elicited, SamplingRequest};
use mcp_runtime::prelude::*;
use serde::Deserialize;

/// Published over MCP at `/mcp/conformance/v1` (stateful mode).
pub const CONFORMANCE: ApiGroup = ApiGroup::mcp("conformance");

/// A 1×1 PNG image, base64.
pub const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==";
/// A tiny WAV file (44-byte header, one silent sample), base64.
pub const WAV_SILENCE: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA==";

/// Returns simple text.
#[rpc_method(name = "test_simple_text", groups = [CONFORMANCE])]
pub fn simple_text() -> ToolOutput {
    Content::text("This is a simple text response for testing.").into()
}

/// Returns an image.
#[rpc_method(name = "test_image_content", groups = [CONFORMANCE])]
pub fn image_content() -> ToolOutput {
    Content::image(PNG_1X1, "image/png").into()
}

/// Returns audio.
#[rpc_method(name = "test_audio_content", groups = [CONFORMANCE])]
pub fn audio_content() -> ToolOutput {
    Content::audio(WAV_SILENCE, "audio/wav").into()
}

/// Returns an embedded resource.
#[rpc_method(name = "test_embedded_resource", groups = [CONFORMANCE])]
pub fn embedded_resource() -> ToolOutput {
    Content::resource_text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
    .into()
}

/// Returns text, an image and a resource.
#[rpc_method(name = "test_multiple_content_types", groups = [CONFORMANCE])]
pub fn multiple_content_types() -> ToolOutput {
    ToolOutput::new(vec![
        Content::text("Multiple content types test:"),
        Content::image(PNG_1X1, "image/png"),
        Content::resource_text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ),
    ])
}

/// Always fails: the error comes back as a tool result with `isError: true`.
#[rpc_method(name = "test_error_handling", groups = [CONFORMANCE])]
pub fn error_handling() -> Result<String, RpcError> {
    Err(RpcError::runtime(
        "This tool intentionally returns an error for testing",
    ))
}

/// Reports progress 0, 50 and 100 of 100, ~50 ms apart.
#[rpc_method(name = "test_tool_with_progress", groups = [CONFORMANCE])]
pub async fn tool_with_progress(ctx: RequestContext) -> ToolOutput {
    for (i, p) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.report_progress(p, Some(100.0), None);
    }
    Content::text("Progress test completed").into()
}

/// Closes its SSE stream mid-call; the result arrives after the client reconnects.
#[rpc_method(name = "test_reconnection", groups = [CONFORMANCE])]
pub async fn reconnection(ctx: RequestContext) -> ToolOutput {
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.close_sse_stream();
    tokio::time::sleep(Duration::from_millis(200)).await;
    Content::text("Reconnection test completed").into()
}

/// A postal address.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "address", extend("$anchor" = "addressDef"))]
pub struct Address {
    /// Street.
    pub street: Option<String>,
    /// City.
    pub city: Option<String>,
}

/// How to reach someone.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ContactMethod {
    /// By phone.
    Phone,
    /// By e-mail.
    Email,
}

/// The rules no single parameter can state: a phone or an e-mail is given, and the one the
/// contact method names.
fn contact_rules(schema: &mut mcp_runtime::schema::Schema) {
    schema.insert(
        "allOf".into(),
        serde_json::json!([{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}]),
    );
    schema.insert(
        "if".into(),
        serde_json::json!({"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]}),
    );
    schema.insert("then".into(), serde_json::json!({"required": ["phone"]}));
    schema.insert("else".into(), serde_json::json!({"required": ["email"]}));
}

/// Takes a JSON Schema 2020-12 input (`$schema`, `$defs` with an `$anchor`, `$ref`, `allOf`,
/// `if`/`then`/`else`).
#[rpc_method(name = "json_schema_2020_12_tool", groups = [CONFORMANCE], transform = contact_rules)]
pub fn json_schema_2020_12(
    /// A name
    name: Option<String>,
    /// An address
    address: Address,
    /// How to reach them
    #[param(rename = "contactMethod")]
    contact_method: Option<ContactMethod>,
    /// A phone number
    phone: Option<String>,
    /// An e-mail address
    email: Option<String>,
) -> String {
    let reach = match contact_method {
        Some(ContactMethod::Phone) => phone.unwrap_or_default(),
        _ => email.or(phone).unwrap_or_default(),
    };
    format!(
        "{} at {:?}, reached at {reach}",
        name.unwrap_or_default(),
        address
    )
}

/// Logs three messages at `info`, ~50 ms apart (sent when the client asked for logs).
#[rpc_method(name = "test_tool_with_logging", groups = [CONFORMANCE])]
pub async fn tool_with_logging(ctx: RequestContext) -> ToolOutput {
    for (i, step) in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.log(LogLevel::Info, step);
    }
    Content::text("Logging test completed").into()
}

/// Logs one message: sent only when the request asked for logs (2026-07-28 `_meta` level).
#[rpc_method(name = "test_logging_tool", groups = [CONFORMANCE])]
pub fn logging_tool(ctx: &RequestContext) -> ToolOutput {
    ctx.log(LogLevel::Info, "test_logging_tool ran");
    Content::text("Logged only if asked").into()
}

/// Static Text Resource
///
/// A static text resource for testing
#[mcp_resource(uri = "test://static-text", name = "static-text", mime_type = "text/plain", groups = [CONFORMANCE])]
pub fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// Static Binary Resource
///
/// A static binary resource (image) for testing
#[mcp_resource(uri = "test://static-binary", name = "static-binary", mime_type = "image/png", groups = [CONFORMANCE])]
pub fn static_binary() -> ResourceContent {
    ResourceContent::base64(PNG_1X1)
}

/// Resource Template
///
/// A resource template with parameter substitution
#[mcp_resource(uri_template = "test://template/{id}/data", name = "template", mime_type = "application/json", groups = [CONFORMANCE])]
pub fn template_data(
    /// The id to substitute
    id: String,
) -> serde_json::Value {
    serde_json::json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") })
}

/// Watched Resource
///
/// A resource clients subscribe to
#[mcp_resource(uri = "test://watched-resource", name = "watched-resource", mime_type = "text/plain", groups = [CONFORMANCE])]
pub fn watched_resource() -> &'static str {
    "Watched resource content"
}

/// Simple Test Prompt
///
/// A simple prompt without arguments
#[mcp_prompt(name = "test_simple_prompt", groups = [CONFORMANCE])]
pub fn simple_prompt() -> Vec<PromptMessage> {
    vec![PromptMessage::user("This is a simple prompt for testing.")]
}

/// Prompt With Arguments
///
/// A prompt with required arguments
#[mcp_prompt(name = "test_prompt_with_arguments", groups = [CONFORMANCE])]
pub fn prompt_with_arguments(
    /// First test argument
    #[complete(with = complete_arg1)]
    arg1: String,
    /// Second test argument
    arg2: String,
) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!(
        "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
    ))]
}

/// Values for `arg1` that start with what was typed.
pub fn complete_arg1(req: &CompletionRequest) -> Vec<&'static str> {
    ["test", "testing", "tested", "value"]
        .into_iter()
        .filter(|v| v.starts_with(req.value.as_str()))
        .collect()
}

/// Prompt With Embedded Resource
///
/// A prompt that includes an embedded resource
#[mcp_prompt(name = "test_prompt_with_embedded_resource", groups = [CONFORMANCE])]
pub fn prompt_with_embedded_resource(
    /// URI of the resource to embed
    #[param(rename = "resourceUri")]
    resource_uri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::resource_text(
            resource_uri,
            "text/plain",
            "Embedded resource content for testing.",
        )),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

/// Prompt With Image
///
/// A prompt that includes image content
#[mcp_prompt(name = "test_prompt_with_image", groups = [CONFORMANCE])]
pub fn prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::image(PNG_1X1, "image/png")),
        PromptMessage::user("Please analyze the image above."),
    ]
}

/// Announces that the tools changed (listen streams that asked get `tools/list_changed`).
#[rpc_method(name = "test_trigger_tool_change", groups = [CONFORMANCE])]
pub fn trigger_tool_change(changes: State<Changes>) -> ToolOutput {
    changes.tools_list_changed();
    Content::text("Tool list change announced").into()
}

/// Announces that the prompts changed (listen streams that asked get `prompts/list_changed`).
#[rpc_method(name = "test_trigger_prompt_change", groups = [CONFORMANCE])]
pub fn trigger_prompt_change(changes: State<Changes>) -> ToolOutput {
    changes.prompts_list_changed();
    Content::text("Prompt list change announced").into()
}

/// Announces that `test://watched-resource` changed (subscribers get `resources/updated`).
#[rpc_method(name = "test_trigger_resource_update", groups = [CONFORMANCE])]
pub fn trigger_resource_update(changes: State<Changes>) -> ToolOutput {
    changes.resource_updated("test://watched-resource");
    Content::text("Resource update announced").into()
}

// ---------------------------------------------------------------------------------------------
// Asking the client: elicitation, sampling, roots (SSE on the handshake era, multi-round-trip
// results on 2026-07-28).

/// The form of `test_elicitation`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct UserInfo {
    /// Your username
    pub username: String,
    /// Your email address
    #[schemars(email)]
    pub email: String,
}

/// Asks the client's model to answer `prompt` (`sampling/createMessage`).
#[rpc_method(name = "test_sampling", groups = [CONFORMANCE])]
pub async fn sampling(
    /// The prompt to send
    prompt: String,
    ctx: RequestContext,
) -> Result<ToolOutput, RpcError> {
    let answer = ctx.sample(SamplingRequest::new(prompt, 100)).await?;
    let text = answer.text().unwrap_or_default();
    Ok(Content::text(format!("LLM response: {text}")).into())
}

/// Asks the user for a username and an email (`elicitation/create`).
#[rpc_method(name = "test_elicitation", groups = [CONFORMANCE])]
pub async fn elicitation(
    /// The message shown to the user
    message: String,
    ctx: RequestContext,
) -> Result<ToolOutput, RpcError> {
    let answer = ctx.elicit::<UserInfo>(message).await?;
    let text = match &answer {
        Elicited::Accepted(u) => format!(
            "User response: accept, content: {{\"username\":{:?},\"email\":{:?}}}",
            u.username, u.email
        ),
        other => format!("User response: {}", other.action()),
    };
    Ok(Content::text(text).into())
}

/// The form of `test_elicitation_sep1034_defaults`: a default on every primitive (SEP-1034).
#[derive(Debug, Deserialize, serde::Serialize, JsonSchema)]
#[serde(default)]
pub struct Defaults {
    /// User name
    pub name: String,
    /// User age
    pub age: i64,
    /// User score
    pub score: f64,
    /// User status
    #[schemars(extend("enum" = ["active", "inactive", "pending"]))]
    pub status: String,
    /// Verification status
    pub verified: bool,
}

impl Default for Defaults {
    fn default() -> Self {
        Self {
            name: "John Doe".into(),
            age: 30,
            score: 95.5,
            status: "active".into(),
            verified: true,
        }
    }
}

/// Elicits a form with a default on every field (SEP-1034).
#[rpc_method(name = "test_elicitation_sep1034_defaults", groups = [CONFORMANCE])]
pub async fn elicitation_sep1034_defaults(ctx: RequestContext) -> Result<ToolOutput, RpcError> {
    let answer = ctx
        .elicit::<Defaults>("Please review and update the form fields with defaults")
        .await?;
    Ok(Content::text(format!("Elicitation completed: action={}", answer.action())).into())
}

/// An untitled choice.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Untitled {
    #[allow(missing_docs)]
    Option1,
    #[allow(missing_docs)]
    Option2,
    #[allow(missing_docs)]
    Option3,
}

/// A titled choice: each variant's title is shown.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Titled {
    /// First Option
    Value1,
    /// Second Option
    Value2,
    /// Third Option
    Value3,
}

/// The form of `test_elicitation_sep1330_enums`: the five enum shapes of SEP-1330.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Enums {
    /// Untitled single-select
    pub untitled_single: Option<Untitled>,
    /// Titled single-select
    pub titled_single: Option<Titled>,
    /// Legacy titled enum
    #[schemars(extend("enum" = ["opt1", "opt2", "opt3"], "enumNames" = ["Option One", "Option Two", "Option Three"]))]
    pub legacy_enum: Option<String>,
    /// Untitled multi-select
    pub untitled_multi: Option<Vec<Untitled>>,
    /// Titled multi-select
    pub titled_multi: Option<Vec<Titled>>,
}

/// Elicits the five enum shapes of SEP-1330.
#[rpc_method(name = "test_elicitation_sep1330_enums", groups = [CONFORMANCE])]
pub async fn elicitation_sep1330_enums(ctx: RequestContext) -> Result<ToolOutput, RpcError> {
    let answer = ctx
        .elicit::<Enums>("Please select options from the enum fields")
        .await?;
    Ok(Content::text(format!("Elicitation completed: action={}", answer.action())).into())
}

/// Needs sampling: a client that did not declare it gets -32021.
#[rpc_method(name = "test_missing_capability", groups = [CONFORMANCE])]
pub async fn missing_capability(ctx: RequestContext) -> Result<ToolOutput, RpcError> {
    let answer = ctx.sample(SamplingRequest::new("Say hello", 20)).await?;
    Ok(Content::text(answer.text().unwrap_or_default().to_owned()).into())
}

/// Asks for a name: on 2026-07-28 an `input_required` result, never a request on the stream.
#[rpc_method(name = "test_streaming_elicitation", groups = [CONFORMANCE])]
pub async fn streaming_elicitation(ctx: RequestContext) -> Result<ToolOutput, RpcError> {
    let name = ctx.elicit::<NameForm>("What is your name?").await?;
    Ok(Content::text(format!("Hello, {}!", greeting_name(name))).into())
}

/// A name.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NameForm {
    /// The name
    pub name: String,
}

fn greeting_name(e: Elicited<NameForm>) -> String {
    e.accepted().map_or_else(|| "stranger".into(), |n| n.name)
}

/// A confirmation.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Confirm {
    /// Confirmed?
    pub ok: bool,
}

/// A color.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ColorForm {
    /// The favorite color
    pub color: String,
}

/// A prompt's context.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ContextForm {
    /// The context
    pub context: String,
}

/// Asks for a name under the key `user_name`.
#[rpc_method(name = "test_input_required_result_elicitation", groups = [CONFORMANCE])]
pub async fn input_required_elicitation(ctx: RequestContext) -> Result<ToolOutput, RpcError> {
    let name = ctx
        .ask("user_name")
        .elicit::<NameForm>("What is your name?")
        .await?;
    Ok(Content::text(format!("Hello, {}!", greeting_name(name))).into())
}

/// Asks the client's model a question.
#[rpc_method(name = "test_input_required_result_sampling", groups = [CONFORMANCE])]
pub async fn input_required_sampling(ctx: RequestContext) -> Result<ToolOutput, RpcError> {
    let answer = ctx
        .ask("capital_question")
        .sample(SamplingRequest::new("What is the capital of France?", 100))
        .await?;
    Ok(Content::text(format!("Model said: {}", answer.text().unwrap_or_default())).into())
}

/// Asks for the client's roots.
#[rpc_method(name = "test_input_required_result_list_roots", groups = [CONFORMANCE])]
pub async fn input_required_list_roots(ctx: RequestContext) -> Result<ToolOutput, RpcError> {
    let roots = ctx.ask("client_roots").roots().await?;
    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(Content::text(format!("Roots: {}", uris.join(", "))).into())
}

/// Asks for a confirmation; the retry's state is checked (signed) before the answer is used.
#[rpc_method(name = "test_input_required_result_request_state", groups = [CONFORMANCE])]
pub async fn input_required_request_state(ctx: RequestContext) -> Result<ToolOutput, RpcError> {
    let ok = ctx
        .ask("confirm")
        .elicit::<Confirm>("Please confirm")
        .await?;
    let ok = ok.accepted().is_some_and(|c| c.ok);
    Ok(Content::text(format!("state-ok: confirmed={ok}")).into())
}

/// Asks for a name, a greeting and the roots in one round.
#[rpc_method(name = "test_input_required_result_multiple_inputs", groups = [CONFORMANCE])]
pub async fn input_required_multiple_inputs(ctx: RequestContext) -> Result<ToolOutput, RpcError> {
    let (name, greeting, roots) = tokio::join!(
        ctx.ask("user_name")
            .elicit::<NameForm>("What is your name?"),
        ctx.ask("greeting")
            .sample(SamplingRequest::new("Generate a greeting", 50)),
        ctx.ask("client_roots").roots(),
    );
    let (name, greeting, roots) = (name?, greeting?, roots?);
    Ok(Content::text(format!(
        "{} {} ({} roots)",
        greeting.text().unwrap_or_default(),
        greeting_name(name),
        roots.len()
    ))
    .into())
}

/// Asks for a name, then (another round) a color.
#[rpc_method(name = "test_input_required_result_multi_round", groups = [CONFORMANCE])]
pub async fn input_required_multi_round(ctx: RequestContext) -> Result<ToolOutput, RpcError> {
    let name = ctx
        .ask("step1")
        .elicit::<NameForm>("Step 1: What is your name?")
        .await?;
    let color = ctx
        .ask("step2")
        .elicit::<ColorForm>("Step 2: What is your favorite color?")
        .await?;
    let color = color.accepted().map_or_else(String::new, |c| c.color);
    Ok(Content::text(format!("{} likes {color}", greeting_name(name))).into())
}

/// Asks for a confirmation: a tampered state on the retry is refused (-32602).
#[rpc_method(name = "test_input_required_result_tampered_state", groups = [CONFORMANCE])]
pub async fn input_required_tampered_state(ctx: RequestContext) -> Result<ToolOutput, RpcError> {
    let ok = ctx
        .ask("confirm")
        .elicit::<Confirm>("Please confirm")
        .await?;
    Ok(Content::text(format!(
        "confirmed: {}",
        ok.accepted().is_some_and(|c| c.ok)
    ))
    .into())
}

/// Asks for what the client can answer: a name when it declared elicitation, and a greeting
/// when it declared sampling.
#[rpc_method(name = "test_input_required_result_capabilities", groups = [CONFORMANCE])]
pub async fn input_required_capabilities(ctx: RequestContext) -> Result<ToolOutput, RpcError> {
    let mut said = Vec::new();
    if ctx.client_supports("elicitation") {
        let name = ctx
            .ask("user_name")
            .elicit::<NameForm>("What is your name?")
            .await?;
        said.push(greeting_name(name));
    }
    if ctx.client_supports("sampling") {
        let g = ctx
            .ask("greeting")
            .sample(SamplingRequest::new("Generate a greeting", 50))
            .await?;
        said.push(g.text().unwrap_or_default().to_owned());
    }
    Ok(Content::text(said.join(" ")).into())
}

/// Input Required Prompt
///
/// A prompt that asks the user for its context first
#[mcp_prompt(name = "test_input_required_result_prompt", groups = [CONFORMANCE])]
pub async fn input_required_prompt(ctx: RequestContext) -> Result<Vec<PromptMessage>, RpcError> {
    let context = ctx
        .ask("user_context")
        .elicit::<ContextForm>("What context should the prompt use?")
        .await?;
    let context = context.accepted().map_or_else(String::new, |c| c.context);
    Ok(vec![PromptMessage::user(format!(
        "Use this context: {context}"
    ))])
}

// ---------------------------------------------------------------------------------------------
// Tasks (2026-07-28 `io.modelcontextprotocol/tasks` extension): the fixtures of the `tasks-*`
// scenarios. A task tool runs until it first waits; then it is a task.

/// Greets synchronously (never a task).
#[rpc_method(name = "greet", groups = [CONFORMANCE])]
pub fn greet(
    /// Who to greet
    name: String,
) -> ToolOutput {
    Content::text(format!("Hello, {name}!")).into()
}

/// Computes slowly: a task when the client accepts tasks; cancellable.
#[rpc_method(name = "slow_compute", groups = [CONFORMANCE])]
#[mcp_tool(task = "optional")]
pub async fn slow_compute(
    /// How long to compute, in seconds
    #[param(max = 600)]
    seconds: u64,
    /// A label for the result
    #[param(default = "job")]
    label: String,
) -> ToolOutput {
    if seconds > 0 {
        tokio::time::sleep(Duration::from_secs(seconds)).await;
    }
    Content::text(format!("{label}: computed in {seconds} s")).into()
}

/// Fails after about a second, as a tool error (the task completes with `isError`).
#[rpc_method(name = "failing_job", groups = [CONFORMANCE])]
#[mcp_tool(task = "required")]
pub async fn failing_job() -> Result<ToolOutput, RpcError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(RpcError::runtime("The job failed"))
}

/// Breaks after a moment (a panic: a protocol error, so the task fails).
#[rpc_method(name = "protocol_error_job", groups = [CONFORMANCE])]
#[mcp_tool(task = "required")]
pub async fn protocol_error_job() -> ToolOutput {
    tokio::time::sleep(Duration::from_millis(100)).await;
    panic!("protocol_error_job always breaks")
}

/// A yes/no answer.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct YesNo {
    /// Go ahead?
    #[serde(default)]
    pub confirm: bool,
}

/// Deletes a file once the user confirms (asked through the task).
#[rpc_method(name = "confirm_delete", groups = [CONFORMANCE])]
#[mcp_tool(task = "optional", destructive_hint = true)]
pub async fn confirm_delete(
    /// The file to delete
    #[param(default = "untitled.txt")]
    filename: String,
    ctx: RequestContext,
) -> Result<ToolOutput, RpcError> {
    // Looking the file up comes first (and makes the call a task).
    tokio::time::sleep(Duration::from_millis(20)).await;
    if !ctx.client_supports("elicitation") {
        return Err(RpcError::logic(format!(
            "Deleting {filename} needs a confirmation, and this client cannot be asked"
        )));
    }
    let answer = ctx.elicit::<YesNo>(format!("Delete {filename}?")).await?;
    let deleted = answer.accepted().is_some_and(|a| a.confirm);
    Ok(Content::text(if deleted {
        format!("Deleted {filename}")
    } else {
        format!("Kept {filename}")
    })
    .into())
}

/// Asks two things at once (through the task).
#[rpc_method(name = "multi_input", groups = [CONFORMANCE])]
#[mcp_tool(task = "optional")]
pub async fn multi_input(ctx: RequestContext) -> Result<ToolOutput, RpcError> {
    tokio::time::sleep(Duration::from_millis(20)).await;
    let (name, ok) = tokio::join!(
        ctx.ask("name").elicit::<NameForm>("Your name?"),
        ctx.ask("confirm").elicit::<YesNo>("Continue?"),
    );
    let (name, ok) = (
        greeting_name(name?),
        ok?.accepted().is_some_and(|a| a.confirm),
    );
    Ok(Content::text(format!("{name}: {ok}")).into())
}

/// Asks for a name first (a multi-round-trip result), then works on as a task.
#[rpc_method(name = "test_tool_with_task", groups = [CONFORMANCE])]
#[mcp_tool(task = "required")]
pub async fn tool_with_task(ctx: RequestContext) -> Result<ToolOutput, RpcError> {
    let name = ctx
        .ask("user_name")
        .elicit::<NameForm>("What is your name?")
        .await?;
    let name = greeting_name(name);
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(Content::text(format!("Task done for {name}")).into())
}

/// Echoes a value that also travels in the `Mcp-Param-Value` header (SEP-2243): a load
/// balancer can route on it without reading the body.
#[rpc_method(name = "test_custom_header", groups = [CONFORMANCE])]
pub fn custom_header(
    /// The value
    #[param(header = "Value")]
    value: String,
) -> ToolOutput {
    Content::text(format!("Value: {value}")).into()
}
