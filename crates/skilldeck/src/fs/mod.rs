//! The filesystem, safely: bounded reads, containment, the walk, file
//! stamps and skilldeck's own folders.

pub mod dirs;
pub mod stamp;
