//! The editor's buffers as the session's files: when the client offers
//! `fs/read_text_file` and `fs/write_text_file`, the write and edit tools
//! read and write through it (unsaved changes included). The step is
//! still snapshotted around the call, so undo works as ever once the
//! editor has saved.

use std::path::Path;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ReadTextFileRequest, SessionId, WriteTextFileRequest};

pub(crate) struct ClientFiles {
    pub(crate) cx: ConnectionTo<Client>,
    pub(crate) session: SessionId,
}

#[async_trait::async_trait]
impl mia_core::EditorFs for ClientFiles {
    async fn read_text(&self, path: &Path) -> Result<String, String> {
        self.cx
            .send_request(ReadTextFileRequest::new(
                self.session.clone(),
                path.to_path_buf(),
            ))
            .block_task()
            .await
            .map(|r| r.content)
            .map_err(|e| e.message)
    }

    async fn write_text(&self, path: &Path, text: &str) -> Result<(), String> {
        self.cx
            .send_request(WriteTextFileRequest::new(
                self.session.clone(),
                path.to_path_buf(),
                text.to_string(),
            ))
            .block_task()
            .await
            .map(|_| ())
            .map_err(|e| e.message)
    }
}
