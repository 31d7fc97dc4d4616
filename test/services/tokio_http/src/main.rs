//! tokio_http: a tiny hyper 0.14 server on a Tokio multi-thread runtime with
//! 2 workers, for test/integration/test_tokio.sh. Every request also runs a
//! spawn_blocking job so that the blocking pool has threads; both kinds of
//! thread are named "tokio-runtime-w". SIGTERM shuts it down gracefully, so
//! the process exits through main and the agent seals its trace.
//! GET /tids answers the ground truth the test checks the trace against:
//! "worker TID..." (threads that ran async handlers) and "blocking TID..."
//! (threads that ran spawn_blocking jobs), one line each.
//! Usage: tokio_http PORT
use std::cell::Cell;
use std::convert::Infallible;
use std::sync::Mutex;

use hyper::service::{make_service_fn, service_fn};
use hyper::{Body, Request, Response, Server};
use tokio::signal::unix::{signal, SignalKind};

/// Thread ids seen running async handlers / spawn_blocking jobs.
static WORKERS: Mutex<Vec<u32>> = Mutex::new(Vec::new());
static BLOCKING: Mutex<Vec<u32>> = Mutex::new(Vec::new());
const WORKER: u8 = 1;
const POOL: u8 = 2;

thread_local! {
    /// Which of the lists above already hold this thread.
    static NOTED: Cell<u8> = Cell::new(0);
}

/// Adds the calling thread's tid to `set` (bit `bit` of NOTED), once per
/// thread: no lock is taken after the first time.
fn note_thread(set: &Mutex<Vec<u32>>, bit: u8) {
    NOTED.with(|noted| {
        if noted.get() & bit == 0 {
            noted.set(noted.get() | bit);
            // /proc/thread-self links to "PID/task/TID".
            let link = std::fs::read_link("/proc/thread-self").expect("/proc/thread-self");
            let tid = link.file_name().and_then(|s| s.to_str()).and_then(|s| s.parse().ok());
            set.lock().unwrap().push(tid.expect("tid"));
        }
    });
}

fn list(set: &Mutex<Vec<u32>>) -> String {
    set.lock().unwrap().iter().map(|t| format!(" {t}")).collect()
}

async fn handle(req: Request<Body>) -> Result<Response<Body>, Infallible> {
    note_thread(&WORKERS, WORKER);
    if req.uri().path() == "/tids" {
        let body = format!("worker{}\nblocking{}\n", list(&WORKERS), list(&BLOCKING));
        return Ok(Response::new(Body::from(body)));
    }
    // Blocking work in the pool: a file read, as a real service would do.
    let len = tokio::task::spawn_blocking(|| {
        note_thread(&BLOCKING, POOL);
        std::fs::read("/proc/self/stat").map(|b| b.len()).unwrap_or(0)
    })
    .await
    .unwrap_or(0);
    Ok(Response::new(Body::from(format!("ok {len}\n"))))
}

fn main() {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("usage: tokio_http PORT");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(4)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
        let make = make_service_fn(|_| async { Ok::<_, Infallible>(service_fn(handle)) });
        let server = Server::bind(&([127, 0, 0, 1], port).into()).serve(make);
        server
            .with_graceful_shutdown(async move {
                term.recv().await;
            })
            .await
            .expect("server");
    });
}
