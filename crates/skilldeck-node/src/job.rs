//! Every slow call is one [`Job`]: a closure run on libuv's thread pool
//! (off the JavaScript thread), its value resolving the call's Promise.

use napi::bindgen_prelude::{AsyncTask, ToNapiValue, TypeName};
use napi::{Env, Task};

type Work<T> = Box<dyn FnOnce() -> napi::Result<T> + Send>;

/// One call's work, run once on the thread pool.
pub struct Job<T: Send + 'static> {
    work: Option<Work<T>>,
}

/// The Promise of `work`'s value.
pub fn spawn<T, F>(work: F) -> AsyncTask<Job<T>>
where
    T: ToNapiValue + TypeName + Send + 'static,
    F: FnOnce() -> napi::Result<T> + Send + 'static,
{
    AsyncTask::new(Job {
        work: Some(Box::new(work)),
    })
}

impl<T> Task for Job<T>
where
    T: ToNapiValue + TypeName + Send + 'static,
{
    type Output = T;
    type JsValue = T;

    fn compute(&mut self) -> napi::Result<T> {
        match self.work.take() {
            Some(work) => work(),
            // libuv computes a task once: a second call is a napi bug.
            None => Err(napi::Error::from_reason("skilldeck: a job ran twice")),
        }
    }

    fn resolve(&mut self, _env: Env, output: T) -> napi::Result<T> {
        Ok(output)
    }
}
