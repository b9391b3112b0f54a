//! SIGTERM on the real binary: the in-flight call finishes and is answered, then it exits 0.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

#[tokio::test]
async fn sigterm_finishes_in_flight_calls_then_exits() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_catalog"))
        .args(["--listen", "127.0.0.1:0"])
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start catalog");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    let lines = std::thread::spawn(move || {
        let mut all = Vec::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(rest) = line.split("catalog listening on ").nth(1) {
                let _ = tx.send(rest.split(':').take(2).collect::<Vec<_>>().join(":"));
            }
            all.push(line);
        }
        all
    });
    let addr = rx.recv_timeout(Duration::from_secs(30)).expect("address");
    let url = format!("http://{addr}/rpc/mcp/v1");
    let call = tokio::spawn(async move {
        reqwest::Client::new()
            .post(url)
            .json(&serde_json::json!({"jsonrpc":"2.0","method":"Orders.pay","params":{"order_id":1,"hold_ms":700},"id":1}))
            .send()
            .await
            .expect("answered")
            .json::<serde_json::Value>()
            .await
            .expect("json")
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill")
            .success()
    );
    let answer = call.await.expect("call task");
    assert_eq!(
        answer["result"],
        serde_json::json!({"order_id":1,"paid":true})
    );
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "exit status {status:?}");
    let log = lines.join().unwrap().join("\n");
    assert!(
        log.contains("shutting down: finishing in-flight requests"),
        "{log}"
    );
}
