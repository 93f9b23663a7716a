//! OpenAI Chat Completions over SSE (spec section 9), also for OpenAI-compatible servers.

use std::sync::Arc;

use super::transport::Transport;
use super::ModelSpec;

pub struct OpenAiChat {
    spec: ModelSpec,
    transport: Arc<dyn Transport>,
}

impl OpenAiChat {
    pub fn new(spec: ModelSpec, transport: Arc<dyn Transport>) -> Self {
        OpenAiChat { spec, transport }
    }
}

#[async_trait::async_trait]
impl super::Provider for OpenAiChat {
    fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    async fn complete(
        &self,
        _context: &crate::conversation::Context,
        _options: &super::RequestOptions,
    ) -> Result<crate::conversation::AssistantMessage, super::ProviderError> {
        let _ = &self.transport;
        todo!("openai chat provider")
    }
}
