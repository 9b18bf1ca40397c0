//! The Remote Workers API's Bots service, served by hand: the crate vx
//! uses for it generates clients only. CreateBotSession hands the one
//! lease out once; UpdateBotSession logs each lease the bot reports
//! completed and stops listing it.

use std::convert::Infallible;

use tonic::codegen::{BoxFuture, Context, Poll, Service, http};
use tonic::{Request, Response, Status};

pub(crate) use googleapis_tonic_google_devtools_remoteworkers_v1test2::google::devtools::remoteworkers::v1test2 as rw;

use super::Shared;

/// The Bots service over the server's state.
#[derive(Clone)]
pub(crate) struct BotsServer(pub Shared);

impl tonic::server::NamedService for BotsServer {
    const NAME: &'static str = "google.devtools.remoteworkers.v1test2.Bots";
}

impl Service<http::Request<tonic::body::Body>> for BotsServer {
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        let state = self.0.clone();
        Box::pin(async move {
            Ok(match req.uri().path() {
                "/google.devtools.remoteworkers.v1test2.Bots/CreateBotSession" => {
                    let codec = tonic_prost::ProstCodec::<rw::BotSession, rw::CreateBotSessionRequest>::default();
                    tonic::server::Grpc::new(codec).unary(Create(state), req).await
                }
                "/google.devtools.remoteworkers.v1test2.Bots/UpdateBotSession" => {
                    let codec = tonic_prost::ProstCodec::<rw::BotSession, rw::UpdateBotSessionRequest>::default();
                    tonic::server::Grpc::new(codec).unary(Update(state), req).await
                }
                _ => Status::unimplemented("not a Bots method").into_http(),
            })
        })
    }
}

struct Create(Shared);

impl tonic::server::UnaryService<rw::CreateBotSessionRequest> for Create {
    type Response = rw::BotSession;
    type Future = BoxFuture<Response<rw::BotSession>, Status>;

    fn call(&mut self, req: Request<rw::CreateBotSessionRequest>) -> Self::Future {
        let state = self.0.clone();
        Box::pin(async move {
            state.refuse_all()?;
            let mut session = req.into_inner().bot_session.unwrap_or_default();
            session.name = "bots/hostile".into();
            session.leases.extend(state.lease.lock().unwrap().take());
            Ok(Response::new(session))
        })
    }
}

struct Update(Shared);

impl tonic::server::UnaryService<rw::UpdateBotSessionRequest> for Update {
    type Response = rw::BotSession;
    type Future = BoxFuture<Response<rw::BotSession>, Status>;

    fn call(&mut self, req: Request<rw::UpdateBotSessionRequest>) -> Self::Future {
        let state = self.0.clone();
        Box::pin(async move {
            state.refuse_all()?;
            let mut session = req.into_inner().bot_session.unwrap_or_default();
            for lease in session.leases.iter().filter(|l| l.state == rw::LeaseState::Completed as i32) {
                if state.reported.lock().unwrap().insert(lease.id.clone()) {
                    let status = lease.status.clone().unwrap_or_default();
                    state.note(&format!("lease {} completed: code {}: {}", lease.id, status.code, status.message));
                }
            }
            session.leases.retain(|l| l.state != rw::LeaseState::Completed as i32);
            Ok(Response::new(session))
        })
    }
}
