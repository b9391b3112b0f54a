//! The kinds of Redis connection the stores use, behind one `ConnectionLike`: apart from
//! `core::redis` (which makes them) and `core::breaker` (which guards the shared one), so that
//! neither imports the other.

/// A connection: the shared, reconnecting one to one Redis, a plain one of one's own, or one
/// to a cluster (which routes each command by its key and follows the slots as they move).
#[derive(Clone)]
pub(crate) enum Conn {
    Managed(redis::aio::ConnectionManager),
    Plain(redis::aio::MultiplexedConnection),
    Cluster(redis::cluster_async::ClusterConnection),
}

impl Conn {
    /// Sends `cmd` to every master of a cluster (to the one Redis otherwise).
    pub(crate) async fn on_every_master(&mut self, cmd: redis::Cmd) -> redis::RedisResult<()> {
        use redis::cluster_routing::{MultipleNodeRoutingInfo, ResponsePolicy, RoutingInfo};
        match self {
            Conn::Cluster(c) => {
                let all = RoutingInfo::MultiNode((
                    MultipleNodeRoutingInfo::AllMasters,
                    Some(ResponsePolicy::AllSucceeded),
                ));
                c.route_command(cmd, all).await.map(drop)
            }
            other => cmd.query_async::<redis::Value>(other).await.map(drop),
        }
    }
}

impl redis::aio::ConnectionLike for Conn {
    fn req_packed_command<'a>(
        &'a mut self,
        cmd: &'a redis::Cmd,
    ) -> redis::RedisFuture<'a, redis::Value> {
        match self {
            Conn::Managed(c) => c.req_packed_command(cmd),
            Conn::Plain(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<redis::Value>> {
        match self {
            Conn::Managed(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Plain(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Managed(c) => c.get_db(),
            Conn::Plain(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}
