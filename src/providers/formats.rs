//! The one list of wire formats: [`ApiKind::wire`] maps each API to the module implementing it.
//! Adding a provider is a folder under `src/providers/` implementing [`super::wire::Format`], a
//! variant of [`ApiKind`] and its line here.

use super::api::ApiKind;
use super::wire::{self, FormatOf};
use super::{anthropic, gemini, openai_chat, openai_responses};

impl ApiKind {
    /// The API's wire format, in all its directions: the one place an API is tied to its module.
    pub fn wire(self) -> &'static dyn wire::WireFormat {
        match self {
            ApiKind::AnthropicMessages => &FormatOf::<anthropic::AnthropicWire>::NEW,
            ApiKind::OpenaiCompletions => &FormatOf::<openai_chat::ChatWire>::NEW,
            ApiKind::OpenaiResponses => &FormatOf::<openai_responses::ResponsesWire>::NEW,
            ApiKind::GoogleGenerativeAi => &FormatOf::<gemini::GeminiWire>::NEW,
        }
    }
}
