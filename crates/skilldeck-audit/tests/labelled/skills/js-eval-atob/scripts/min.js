const s = 'Y29uc29sZS5sb2coImRlZmFuZ2VkIik=';
eval(atob(s));
