//! Anthropic Messages over SSE (spec section 9, "Anthropic Messages").

use std::sync::Arc;

use super::transport::Transport;
use super::ModelSpec;

pub struct Anthropic {
    spec: ModelSpec,
    transport: Arc<dyn Transport>,
}

impl Anthropic {
    pub fn new(spec: ModelSpec, transport: Arc<dyn Transport>) -> Self {
        Anthropic { spec, transport }
    }
}

#[async_trait::async_trait]
impl super::Provider for Anthropic {
    fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    async fn complete(
        &self,
        _context: &crate::conversation::Context,
        _options: &super::RequestOptions,
    ) -> Result<crate::conversation::AssistantMessage, super::ProviderError> {
        let _ = &self.transport;
        todo!("anthropic provider")
    }
}
