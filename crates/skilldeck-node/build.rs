//! Node's symbols are resolved when the addon is loaded (napi-build sets the link flags).
fn main() {
    napi_build::setup();
}
