//! A throwaway `redis-server` for tests (this crate's, with `cfg(test)`, and the repository's,
//! through [`crate::test_util`]): one harness, not a copy per test crate.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A `redis-server` on a free loopback port, without persistence unless started
/// [`Redis::durable`]; killed on drop. A missing
/// server or a failed bind fails the test: the tests that need it are `#[ignore]`d, and
/// `scripts/test.sh` installs it and runs them. `MCP_TEST_REDIS` names another binary.
#[derive(Debug)]
pub struct Redis {
    bin: String,
    child: Option<Child>,
    port: u16,
    /// Where a durable one keeps its append-only file (removed on drop).
    dir: Option<std::path::PathBuf>,
}

impl Redis {
    /// Starts one, and waits until it accepts connections.
    pub fn start() -> Self {
        Self::start_with(None)
    }

    /// Starts one that keeps what it acknowledged as production should: the append-only file
    /// on (`appendfsync everysec`), in a directory of its own; a restart reads it back.
    pub fn durable() -> Self {
        let dir = std::env::temp_dir().join(format!(
            "mcp-test-redis-{}-{}",
            std::process::id(),
            crate::ids::random_id()
        ));
        std::fs::create_dir_all(&dir).expect("a directory for the append-only file");
        Self::start_with(Some(dir))
    }

    fn start_with(dir: Option<std::path::PathBuf>) -> Self {
        let bin = std::env::var("MCP_TEST_REDIS").unwrap_or_else(|_| "redis-server".into());
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let mut r = Redis {
            bin,
            child: None,
            port,
            dir,
        };
        r.restart();
        r
    }

    /// Starts it again on the same port (after [`Self::stop`]): empty, or, when durable, with
    /// what its append-only file kept.
    pub fn restart(&mut self) {
        let mut cmd = Command::new(&self.bin);
        cmd.args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", ""]);
        match &self.dir {
            Some(dir) => cmd
                .args(["--appendonly", "yes", "--appendfsync", "everysec", "--dir"])
                .arg(dir),
            None => cmd.args(["--appendonly", "no"]),
        };
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "{} cannot run ({e}): scripts/install-test-clients.sh installs it",
                    self.bin
                )
            });
        self.child = Some(child);
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("redis-server did not start");
    }

    /// Stops it (a restart brings it back).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Hangs it (SIGSTOP): connections stay open, nothing is answered, as a Redis that is
    /// overloaded or on the wrong side of a partition.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Lets a paused one go on (SIGCONT).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, which: &str) {
        let pid = self.child.as_ref().expect("a running redis-server").id();
        let sent = Command::new("kill")
            .args([which, &pid.to_string()])
            .status();
        assert!(sent.is_ok_and(|s| s.success()), "kill {which} {pid}");
    }

    /// Its URL.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// A store on it.
    #[cfg(feature = "redis")]
    pub fn store(&self) -> crate::core::RedisStore {
        crate::core::RedisStore::connect(&self.url()).expect("a Redis URL")
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
